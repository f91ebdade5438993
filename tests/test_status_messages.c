/* Every status band and contract code turns into its documented message and name. */
#include <criterion/criterion.h>
#include <string.h>

#include "kernels/mla_status.h"
#include "kernels/mla_status_table.h"

Test(status_messages, ok_and_bands) {
    cr_assert_str_eq(mla_status_message(0), "ok");
    cr_assert_str_eq(mla_status_name(0), "MLA_OK");
    cr_assert(strstr(mla_status_message(10035), "no driver") != NULL);
    cr_assert(strstr(mla_status_message(10100), "no CUDA-capable device") != NULL);
    cr_assert(strstr(mla_status_message(20015), "declined") != NULL);
    cr_assert(strstr(mla_status_message(30013), "not a decline") != NULL);
    cr_assert(strstr(mla_status_message(40999), "unknown contract code 40999") != NULL);
    cr_assert_str_eq(mla_status_name(10100), "CUDA");
    cr_assert_str_eq(mla_status_name(20015), "LT_DECLINE");
    cr_assert_str_eq(mla_status_name(-1), "UNKNOWN");
}

/* The seed's codes keep their pinned values and meanings. */
Test(status_messages, seed_codes_pinned) {
    static const struct {
        int code;
        const char *needle;
    } seed[] = {
        {40001, "even"},
        {40002, "MLA_MAX_RANK"},
        {40003, "MLA_MAX_ROPE"},
        {40004, "t_q > t_kv"},
        {40010, "k-pool size"},
        {40011, "indexer head count"},
        {40012, "grid.x"},
        {40013, "empty"},
        {40014, "select_k * pool + pool - 1"},
        {40015, "empty gathered"},
        {40017, "head dim must be positive"},
    };
    for (size_t i = 0; i < sizeof seed / sizeof seed[0]; i++) {
        cr_expect(mla_status_is_contract(seed[i].code), "code %d not in the table", seed[i].code);
        cr_expect(strstr(mla_status_message(seed[i].code), seed[i].needle) != NULL,
                  "code %d: message '%s' lacks '%s'", seed[i].code,
                  mla_status_message(seed[i].code), seed[i].needle);
    }
}

/* Codes are unique, in the contract band, with a name and a message. */
Test(status_messages, table_well_formed) {
    for (int i = 0; i < mla_contract_table_len; i++) {
        const mla_contract_entry *e = &mla_contract_table[i];
        cr_expect(e->code > 40000 && e->code < 50000, "code %d outside the band", e->code);
        cr_expect(strncmp(e->name, "MLA_E_", 6) == 0);
        cr_expect(strlen(e->message) > 10);
        cr_expect_str_eq(mla_status_name(e->code), e->name);
        for (int j = 0; j < i; j++)
            cr_expect(mla_contract_table[j].code != e->code, "duplicate code %d", e->code);
    }
}
