# Included by CTestTestfile.cmake (TEST_INCLUDE_FILES, after gtest's discovered
# tests): the tests that flood the machine with ranks run with nothing beside them.
set_tests_properties(ShmrunTest.ThousandRanks ShmrunTest.ThousandRanksWithTaggedOutput PROPERTIES RUN_SERIAL TRUE)
