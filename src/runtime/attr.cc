// Attribute caching: the keyval table, attribute lists and the callback
// protocol (see runtime/attr.h for the representation).
//
// Every operation is a scan of one object's short list plus at most one
// callback per attribute.  Around each callback: copy what the call needs
// (function, extra state, value) into locals, call, then look the list and
// the keyval up again, because the callback may have changed either.
#include "runtime/attr.h"

#include <unordered_map>

#include "runtime/comm.h"
#include "runtime/win.h"

namespace shmcoll::rt {

namespace {

constexpr uint32_t kKeyvalKind = 0x25000000u;
constexpr uint32_t kMaxSerial = 0x00ffffffu;

std::unordered_map<uint32_t, Keyval> gKeyvals;  // by serial
uint32_t gNextSerial = 1;
std::unordered_map<int, AttrList> gTypeAttrs;  // by datatype handle; no empty lists

int findIndex(const AttrList& l, int kv) {
  for (size_t i = 0; i < l.size(); ++i)
    if (l[i].keyval == kv) return static_cast<int>(i);
  return -1;
}

void addUse(int kv) {
  if (Keyval* k = keyval(kv)) ++k->uses;
}

void dropUse(int kv) {
  auto it = gKeyvals.find(static_cast<uint32_t>(kv) & kMaxSerial);
  if (it == gKeyvals.end() || (static_cast<uint32_t>(kv) & ~kMaxSerial) != kKeyvalKind) return;
  if (it->second.uses) --it->second.uses;
  if (it->second.freed && it->second.uses == 0) gKeyvals.erase(it);
}

void trimType(AttrKind kind, int obj) {
  if (kind != AttrKind::kType) return;
  auto it = gTypeAttrs.find(obj);
  if (it != gTypeAttrs.end() && it->second.empty()) gTypeAttrs.erase(it);
}

// Removes the entry (a.keyval, a.value) if it is still there (a callback may
// have removed or replaced it meanwhile) and releases its hold on the keyval.
void removeEntry(AttrKind kind, int obj, const Attr& a) {
  AttrList* l = attrList(kind, obj, false);
  if (!l) return;
  int i = findIndex(*l, a.keyval);
  if (i < 0 || (*l)[i].value != a.value) return;
  l->erase(l->begin() + i);
  trimType(kind, obj);
  dropUse(a.keyval);
}

int callDelete(int obj, const Attr& a) {
  Keyval* k = keyval(a.keyval);
  if (!k || !k->del) return 0;
  AttrDeleteFn* fn = k->del;
  void* extra = k->extra;
  return fn(obj, a.keyval, a.value, extra);
}

}  // namespace

int createKeyval(AttrKind kind, AttrCopyFn* copy, AttrDeleteFn* del, void* extra) {
  uint32_t serial = 0;
  if (gNextSerial <= kMaxSerial) {
    serial = gNextSerial++;
  } else {  // every serial was handed out once: reuse a free one
    for (uint32_t s = 1; s <= kMaxSerial && !serial; ++s)
      if (!gKeyvals.count(s)) serial = s;
    if (!serial) return 0;
  }
  Keyval& k = gKeyvals[serial];
  k.kind = kind;
  k.copy = copy;
  k.del = del;
  k.extra = extra;
  return static_cast<int>(kKeyvalKind | serial);
}

Keyval* keyval(int h) {
  uint32_t u = static_cast<uint32_t>(h);
  if ((u & ~kMaxSerial) != kKeyvalKind) return nullptr;
  auto it = gKeyvals.find(u & kMaxSerial);
  return it == gKeyvals.end() ? nullptr : &it->second;
}

void freeKeyval(int h) {
  Keyval* k = keyval(h);
  if (!k || k->freed) return;
  k->freed = true;
  if (k->uses == 0) gKeyvals.erase(static_cast<uint32_t>(h) & kMaxSerial);
}

size_t liveKeyvals() { return gKeyvals.size(); }

AttrList* attrList(AttrKind kind, int obj, bool create) {
  if (kind == AttrKind::kComm) {
    Comm* c = anyComm(obj);  // (an idup copies attributes before it completes)
    return c ? &c->attrs : nullptr;
  }
  if (kind == AttrKind::kWin) {
    Win* w = win(obj);
    return w ? &w->attrs : nullptr;
  }
  if (create) return &gTypeAttrs[obj];
  auto it = gTypeAttrs.find(obj);
  return it == gTypeAttrs.end() ? nullptr : &it->second;
}

bool getAttr(AttrKind kind, int obj, int kv, void** value) {
  const AttrList* l = attrList(kind, obj, false);
  if (!l) return false;
  int i = findIndex(*l, kv);
  if (i < 0) return false;
  *value = (*l)[i].value;
  return true;
}

int setAttr(AttrKind kind, int obj, int kv, void* value, int* failedKey) {
  AttrList* l = attrList(kind, obj, false);
  if (l) {
    int i = findIndex(*l, kv);
    if (i >= 0) {
      Attr old = (*l)[i];
      if (int rc = callDelete(obj, old)) {
        *failedKey = kv;
        return rc;
      }
    }
  }
  l = attrList(kind, obj, true);
  if (!l) return 0;  // the callback freed the communicator
  // Take the new hold before dropping the old one, so the keyval survives
  // when the user has freed it meanwhile.
  addUse(kv);
  int i = findIndex(*l, kv);
  if (i >= 0) {  // the old entry (its delete callback ran), or one the callback itself set
    Attr gone = (*l)[i];
    l->erase(l->begin() + i);
    dropUse(gone.keyval);
  }
  l->push_back({kv, value});
  return 0;
}

int deleteAttr(AttrKind kind, int obj, int kv, int* failedKey) {
  const AttrList* l = attrList(kind, obj, false);
  if (!l) return 0;
  int i = findIndex(*l, kv);
  if (i < 0) return 0;
  Attr a = (*l)[i];
  if (int rc = callDelete(obj, a)) {
    *failedKey = kv;
    return rc;
  }
  removeEntry(kind, obj, a);
  return 0;
}

int deleteAllAttrs(AttrKind kind, int obj, bool stopOnFailure, int* failedKey) {
  int first = 0;
  const AttrList* l = attrList(kind, obj, false);
  // Callbacks that keep setting new attributes on the object being emptied
  // cannot make this loop forever: past the budget the rest goes without
  // callbacks.
  size_t budget = l ? 2 * l->size() + 64 : 0;
  while ((l = attrList(kind, obj, false)) && !l->empty()) {
    Attr a = l->back();
    if (budget == 0) {
      removeEntry(kind, obj, a);
      continue;
    }
    --budget;
    int rc = callDelete(obj, a);
    if (rc && stopOnFailure) {
      *failedKey = a.keyval;
      return rc;
    }
    if (rc && !first) {
      first = rc;
      *failedKey = a.keyval;
    }
    // A value the callback set anew under the same keyval is kept here and
    // goes on a later round.
    removeEntry(kind, obj, a);
  }
  return first;
}

int copyAttrs(AttrKind kind, int oldObj, int newObj, int* failedKey) {
  const AttrList* l = attrList(kind, oldObj, false);
  if (!l) return 0;
  const AttrList snapshot = *l;  // callbacks may change the old object's list
  for (const Attr& a : snapshot) {
    Keyval* k = keyval(a.keyval);
    if (!k || !k->copy) continue;
    AttrCopyFn* fn = k->copy;
    void* extra = k->extra;
    void* out = nullptr;
    int flag = 0;
    if (int rc = fn(oldObj, a.keyval, extra, a.value, &out, &flag)) {
      *failedKey = a.keyval;
      return rc;
    }
    if (!flag) continue;
    AttrList* nl = attrList(kind, newObj, true);
    if (!nl) return 0;
    addUse(a.keyval);
    int i = findIndex(*nl, a.keyval);
    if (i >= 0) {
      Attr gone = (*nl)[i];
      nl->erase(nl->begin() + i);
      dropUse(gone.keyval);
    }
    nl->push_back({a.keyval, out});
  }
  return 0;
}

}  // namespace shmcoll::rt
