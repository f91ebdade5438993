"""tools/pycheck.py: the runner of the tools' plain-Python tests (shard_test, ledger_test).

    from pycheck import test, main     # @test registers a check function
    if __name__ == "__main__": sys.exit(main("ledger_test"))

main runs every registered check in order, prints "ok NAME" or "FAIL NAME" with the traceback,
writes each as a JUnit case to $XML_OUTPUT_FILE (Bazel's) when set, prints the project's closing
line and returns 1 when one failed."""
import os
import traceback
import xml.etree.ElementTree as ET

TESTS = []


def test(fn):
    TESTS.append(fn)
    return fn


def main(suite):
    results = []
    for fn in TESTS:
        try:
            fn()
            results.append((fn.__name__, None))
            print(f"ok   {fn.__name__}")
        except Exception:  # noqa: BLE001 (a failing check, reported with its traceback)
            tb = traceback.format_exc()
            results.append((fn.__name__, tb))
            print(f"FAIL {fn.__name__}\n{tb}")
    xml = os.environ.get("XML_OUTPUT_FILE")
    if xml:
        root = ET.Element("testsuites")
        ts = ET.SubElement(root, "testsuite", name=suite, tests=str(len(results)))
        for name, tb in results:
            tc = ET.SubElement(ts, "testcase", classname=suite, name=name)
            if tb:
                ET.SubElement(tc, "failure", message=tb.strip().splitlines()[-1]).text = tb
        ET.ElementTree(root).write(xml, encoding="utf-8", xml_declaration=True)
    failed = sum(1 for _, tb in results if tb)
    print(f"{len(results) - failed} passed, {failed} failed, 0 skipped")
    return 1 if failed else 0
