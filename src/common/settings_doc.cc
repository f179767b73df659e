// Settings: the help texts and the README's table, generated from the table
// (settings.def), so that what users read cannot drift from what the code
// does.  `shmrun --help`, `--help-settings` and `--settings-markdown` print
// them; scripts/gen-settings-doc.sh puts the markdown into the README, and a
// test fails when the README's copy differs.
#include <string>
#include <vector>

#include "common/settings.h"

namespace shmcoll::settings {

namespace {

constexpr size_t kWidth = 100;

// Markdown to terminal text: the backticks go.
std::string plain(const std::string& md) {
  std::string s;
  for (char c : md)
    if (c != '`') s += c;
  return s;
}

// `text` in lines of at most kWidth columns, each starting with `indent`.
std::string wrap(const std::string& text, const std::string& indent) {
  std::string out, line = indent;
  size_t at = 0;
  while (at < text.size()) {
    size_t end = text.find(' ', at);
    if (end == std::string::npos) end = text.size();
    const std::string word = text.substr(at, end - at);
    if (line.size() > indent.size() && line.size() + 1 + word.size() > kWidth) {
      out += line + "\n";
      line = indent;
    }
    if (line.size() > indent.size()) line += ' ';
    line += word;
    at = end + 1;
  }
  return out + line + "\n";
}

std::string readersText(unsigned readers) {
  if (readers == (kShmrun | kLibrary)) return "shmrun and the library";
  if (readers == kShmrun) return "shmrun";
  if (readers == kLibrary) return "the library";
  return "programs and tools (set by shmrun)";
}

std::string typeName(Type t) {
  switch (t) {
    case kSize: return "byte size";
    case kCount: return "count";
    case kInteger: return "integer";
    case kFlag: return "flag";
    case kChoice: return "choice";
    case kString: return "string";
    case kPath: return "path";
  }
  return "";
}

// The values column of the README: "size, 64 to 1g", "`auto`, `shm`, `memfd`", ...
std::string valuesMarkdown(const Spec& sp) {
  if (sp.type == kChoice) return choiceList(sp, "`");
  std::string v = typeName(sp.type);
  if (const std::string r = rangeText(sp); !r.empty()) v += ", " + r;
  if (sp.key && (sp.type == kSize || sp.type == kCount) && sp.max == UINT64_MAX) v += ", or `off`";
  return v;
}

// "decision table: `cma_min`, per operation" for a tuned setting.
std::string keyText(const Spec& sp) {
  if (!sp.key) return "";
  return std::string("decision table: `") + sp.key + "`" + (sp.scope == kPerOp ? ", per operation" : "");
}

// The settings users set (not the launcher's protocol or test hooks), in
// the table's order.
std::vector<const Spec*> userSpecs() {
  std::vector<const Spec*> out;
  for (const Spec& sp : kSpecs)
    if (sp.audience == kUser) out.push_back(&sp);
  return out;
}

}  // namespace

std::string helpText() {
  std::string out =
      "Settings (environment variables, read by shmrun and the library; shmrun checks them all before it\n"
      "starts a rank; 'shmrun --help-settings' shows their syntax, ranges and decision-table keys):\n";
  for (const Spec* spp : userSpecs()) {
    const Spec& sp = *spp;
    out += "  ";
    out += sp.name;
    out += "  default: " + plain(sp.dfltText) + "\n";
    out += wrap(plain(sp.help), "      ");
  }
  return out;
}

std::string fullText() {
  std::string out =
      "shmcoll settings (src/common/settings.def)\n"
      "\n"
      "Byte sizes are decimal digits with an optional k, m, g or t suffix (powers of two, either case),\n"
      "optionally followed by iB or B: 4096, 64k, 64KiB, 64kB (not 64kb: b is bits).  Counts take the same\n"
      "syntax; integers are digits only; flags are 1/0, yes/no, on/off, true/false.  A setting with a\n"
      "decision-table key also takes 'off', the largest value (never, or no limit), where its range allows\n"
      "it; its variable wins over the table's rules, which win over the default.  An empty value is the\n"
      "same as unset.  A malformed or out-of-range value stops shmrun (exit status 2) and makes MPI_Init\n"
      "fail.\n";
  for (const Spec& sp : kSpecs) {
    out += "\n";
    out += sp.name;
    out += "\n";
    std::string what = typeName(sp.type);
    if (sp.type == kChoice) what += " (" + choiceList(sp, "") + ")";
    if (const std::string r = rangeText(sp); !r.empty()) what += ", " + r;
    if (sp.key && (sp.type == kSize || sp.type == kCount) && sp.max == UINT64_MAX) what += ", or off";
    what += "; default: " + plain(sp.dfltText);
    if (sp.computed) what += std::string(" (computed: ") + sp.computed + ")";
    out += wrap(what, "    ");
    std::string where = sp.scope == kPerOp ? "per operation" : "job-wide";
    if (sp.key) where += std::string("; decision-table key ") + sp.key;
    where += "; read by " + readersText(sp.readers);
    if (sp.audience == kTestHook) where += "; internal: a test hook";
    if (sp.audience == kProtocol) where += "; internal: the launcher <-> rank protocol";
    out += wrap(where, "    ");
    out += wrap(plain(sp.help), "    ");
  }
  return out;
}

std::string markdown() {
  std::string out =
      "| variable | default | values | effect |\n"
      "| --- | --- | --- | --- |\n";
  for (const Spec* spp : userSpecs()) {
    const Spec& sp = *spp;
    std::string effect = sp.help;
    if (sp.key) effect += " (" + keyText(sp) + ")";
    // (appends one by one: GCC 12 warns falsely about "literal" + std::string here)
    out += "| `";
    out += sp.name;
    out += "` | ";
    out += sp.dfltText;
    out += " | " + valuesMarkdown(sp) + " | " + effect + " |\n";
  }
  out +=
      "\n"
      "Sizes are decimal digits with an optional `k`, `m`, `g` or `t` suffix (powers of two, either case),\n"
      "optionally followed by `iB` or `B`: `4096`, `64k`, `64KiB`, `64kB` (not `64kb`: `b` is bits). Counts\n"
      "take the same syntax, integers are digits only, flags are `1`/`0`, `yes`/`no`, `on`/`off`,\n"
      "`true`/`false`. A setting with a decision-table key also takes `off`, the largest value (never, or\n"
      "no limit), and its variable wins over the table. An empty value is the same as unset. A malformed or\n"
      "out-of-range value stops `shmrun` (exit status 2) and makes `MPI_Init` fail, with a message naming\n"
      "the variable. `shmrun --help-settings` lists every setting with its range and who reads it, the\n"
      "internal ones (test hooks, the launcher's protocol) too.\n";
  return out;
}

}  // namespace shmcoll::settings
