/* mla_cuda_check.h: the one CUDA-check macro of the host launchers (CUDA C++ only).
 *
 * MLA_CUDA_CHECK(stmt) evaluates a cudaError_t-returning host call; on failure it records the
 * failing statement, function, file and line in a thread-local slot (read back with
 * mla_cuda_last_failure(), e.g. by a test printing why a launch failed) and returns
 * 10000 + the error from the enclosing launcher. Launchers never print: a CPU-tier run makes
 * thousands of launches that all fail with "no device", by design. The recorder is defined in
 * mla_cuda_check.cu.
 */
#ifndef MLA_CUDA_CHECK_H
#define MLA_CUDA_CHECK_H

#include <cuda_runtime.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Records one failure (called by the macro). */
void mla_cuda_record_failure(int err, const char *stmt, const char *func, const char *file,
                             int line);

/* The calling thread's last recorded failure as "file:line func: stmt -> err (name)", or "" when
 * none. @return thread-local storage, valid until the thread's next failure. */
const char *mla_cuda_last_failure(void);

#ifdef __cplusplus
}
#endif

#define MLA_CUDA_CHECK(stmt)                                                                       \
    do {                                                                                           \
        cudaError_t mla_err_ = (stmt);                                                             \
        if (mla_err_ != cudaSuccess) {                                                             \
            mla_cuda_record_failure((int)mla_err_, #stmt, __func__, __FILE__, __LINE__);           \
            return 10000 + (int)mla_err_;                                                          \
        }                                                                                          \
    } while (0)

#endif /* MLA_CUDA_CHECK_H */
