/* safetensors.h: reader and writer of the safetensors format used by the golden fixtures.
 *
 * Layout: u64 little-endian header length N, then N bytes of JSON
 *   { "name": {"dtype": "F32", "shape": [d0, d1, ...], "data_offsets": [begin, end]}, ...,
 *     "__metadata__": {"key": "value", ...} }          (metadata optional, strings only)
 * then the data section (raw little-endian tensor bytes; offsets relative to its start).
 *
 * The reader refuses, with a message naming the file (the `label`) and the problem, and never
 * aborts or leaks: a file shorter than 8 bytes, a header length over the file or over
 * ST_MAX_HEADER, invalid JSON, a header that is not an object, a tensor entry that is not an
 * object, a missing / wrongly typed dtype / shape / data_offsets, an unknown dtype, a shape entry
 * that is not a non-negative integer, more than ST_MAX_DIMS dims, an element count that
 * overflows, shape product * dtype size != end - begin, begin > end, offsets outside the data
 * section, overlapping ranges, gaps (like the reference implementation, the ranges must tile the
 * data section exactly), duplicate names, a non-string metadata value.
 */
#ifndef MLA_SAFETENSORS_H
#define MLA_SAFETENSORS_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define ST_MAX_HEADER ((uint64_t)100 * 1024 * 1024)
#define ST_MAX_DIMS 8
#define ST_ERR_LEN 512

typedef enum {
    ST_F32 = 0,
    ST_BF16,
    ST_F16,
    ST_F64,
    ST_I32,
    ST_I64,
    ST_I16,
    ST_I8,
    ST_U8,
    ST_BOOL,
    ST_DTYPE_COUNT
} st_dtype;

const char *st_dtype_name(st_dtype d);
size_t st_dtype_size(st_dtype d);
/* Returns 0 and sets *out, or -1 for an unknown name. */
int st_dtype_parse(const char *name, st_dtype *out);

typedef struct {
    char *name;
    st_dtype dtype;
    int ndim;
    int64_t shape[ST_MAX_DIMS];
    uint64_t numel;
    uint64_t begin, end; /* offsets into the data section */
    const uint8_t *data; /* points into st_file's buffer */
} st_tensor;

typedef struct {
    uint8_t *buf; /* owned copy of the whole file */
    size_t size;
    const uint8_t *data; /* start of the data section */
    uint64_t data_size;
    st_tensor *tensors; /* in data-offset order */
    size_t n_tensors;
    char **meta_keys, **meta_vals;
    size_t n_meta;
} st_file;

/* Parse an in-memory buffer (copied; the caller keeps ownership of buf). label names the source
 * in error messages. Returns 0, or -1 with err filled and *out left empty (nothing to free). */
int st_read_mem(const uint8_t *buf, size_t n, const char *label, st_file *out, char *err,
                size_t errlen);
/* Read and parse a file. Same contract. */
int st_read_file(const char *path, st_file *out, char *err, size_t errlen);
void st_free(st_file *f);
const st_tensor *st_find(const st_file *f, const char *name);
const char *st_meta(const st_file *f, const char *key);

/* ---------------------------------------------------------------- writer ------------------- */
typedef struct {
    char *name;
    st_dtype dtype;
    int ndim;
    int64_t shape[ST_MAX_DIMS];
    const void *data; /* borrowed until st_writer_write */
    size_t nbytes;
} st_wtensor;

typedef struct {
    st_wtensor *t;
    size_t n, cap;
    char **meta_keys, **meta_vals;
    size_t n_meta, cap_meta;
} st_writer;

void st_writer_init(st_writer *w);
/* Adds a tensor (data borrowed, little-endian host assumed). Returns 0 or -1 on bad args / OOM. */
int st_writer_add(st_writer *w, const char *name, st_dtype dtype, int ndim, const int64_t *shape,
                  const void *data);
int st_writer_meta(st_writer *w, const char *key, const char *value);
/* Writes the file (tensors in insertion order, header padded with spaces to a multiple of 8).
 * Returns 0 or -1 with err filled. */
int st_writer_write(const st_writer *w, const char *path, char *err, size_t errlen);
void st_writer_free(st_writer *w);

#ifdef __cplusplus
}
#endif
#endif /* MLA_SAFETENSORS_H */
