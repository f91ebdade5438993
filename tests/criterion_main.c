/* criterion_main.c: the main() of every Criterion test binary. Adds a JUnit XML report where
 * Bazel asks for one (XML_OUTPUT_FILE) or MLA_XML_OUTPUT names a file (the GPU bundle), then
 * hands the command line to Criterion (so --filter, --verbose, --xml work as usual). */
#include <stdio.h>

#include <criterion/criterion.h>
#include <criterion/hooks.h>
#include <criterion/options.h>
#include <criterion/output.h>
#include <stdlib.h>

int main(int argc, char *argv[]) {
    struct criterion_test_set *tests = criterion_initialize();
    const char *xml = getenv("MLA_XML_OUTPUT");
    if (!xml || !*xml) xml = getenv("XML_OUTPUT_FILE");
    if (xml && *xml) criterion_add_output("xml", xml);
    int result = 0;
    if (criterion_handle_args(argc, argv, true)) result = !criterion_run_all_tests(tests);
    criterion_finalize(tests);
    return result;
}
