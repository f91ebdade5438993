/* contract_doc.h: docs/contract.md, printed from the contract table (kernels/mla_status.c). */
#ifndef MLA_TOOLS_CONTRACT_DOC_H
#define MLA_TOOLS_CONTRACT_DOC_H

#include <stdio.h>

/* Writes the whole of docs/contract.md to f. @return 0, or -1 on a write error. */
int contract_doc_write(FILE *f);

#endif
