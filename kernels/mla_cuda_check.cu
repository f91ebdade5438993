/* mla_cuda_check.cu: the CUDA failure recorder of kernels/mla_cuda_check.h (host code only; a .cu
 * because it names the error through the CUDA runtime, cudaGetErrorName). One unit for every
 * kernel file, so the record does not live inside any one family's launchers.
 */
#include <cuda_runtime.h>
#include <stdio.h>

#include "kernels/mla_cuda_check.h"

static thread_local char mla_failure_text[512];

extern "C" void mla_cuda_record_failure(int err, const char *stmt, const char *func,
                                        const char *file, int line) {
    snprintf(mla_failure_text, sizeof mla_failure_text, "%s:%d %s: %s -> %d (%s)", file, line, func,
             stmt, err, cudaGetErrorName((cudaError_t)err));
}

extern "C" const char *mla_cuda_last_failure(void) { return mla_failure_text; }
