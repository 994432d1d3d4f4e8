#!/bin/bash
# The unit tests of the slow-client experiment's modules
# (tools/experiment/, tests/experiment/test_*.py): the statistics and the
# verdict (NOT JUDGED when the calibration cell reads 0.89), the schedule
# (a fake sampler and fake slow clients with a 1 s period charge both
# stacks alike under the quick schedule), the sampler's readers.  One
# "ok" line per unit test; standard library only, no process started.
source "$(dirname "$0")/lib.sh"

PYTHONPATH=$TOP/tools:$TOP/tests/experiment PYTHONDONTWRITEBYTECODE=1 python3 - "$TOP/tests/experiment" >"$T/units.out" 2>&1 <<'PY'
import sys
import unittest


class Result(unittest.TextTestResult):
    def addSuccess(self, test):
        print("ok - experiment unit: %s" % test.id(), flush=True)

    def addFailure(self, test, err):
        print("not ok - experiment unit: %s" % test.id(), flush=True)
        for line in self._exc_info_to_string(err, test).splitlines():
            print("# " + line)

    addError = addFailure


suite = unittest.defaultTestLoader.discover(sys.argv[1], pattern="test_*.py")
if suite.countTestCases() == 0:
    print("not ok - experiment unit tests found")
unittest.TextTestRunner(resultclass=Result, stream=open("/dev/null", "w")).run(suite)
PY
cat "$T/units.out"
grep -q '^ok - ' "$T/units.out" || not_ok "the experiment's unit tests ran"
FAILS=$((FAILS + $(grep -c '^not ok' "$T/units.out")))
finish
