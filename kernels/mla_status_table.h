/* mla_status_table.h: the contract table behind mla_status_message (code, constant name, the
 * launchers that return it, message). docs/contract.md is printed from it. */
#ifndef MLA_STATUS_TABLE_H
#define MLA_STATUS_TABLE_H

#ifdef __cplusplus
extern "C" {
#endif

typedef struct {
    int code;
    const char *name;
    const char *launchers;
    const char *message;
} mla_contract_entry;

extern const mla_contract_entry mla_contract_table[];
extern const int mla_contract_table_len;

#ifdef __cplusplus
}
#endif
#endif
