/* contract_table: prints docs/contract.md (`bazel run //tools:contract_table > docs/contract.md`).
 */
#include <stdio.h>

#include "tools/contract_doc.h"

int main(void) { return contract_doc_write(stdout) ? 1 : 0; }
