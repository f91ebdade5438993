// Standalone (eighth session): the bits cvt.rna.tf32.f32 and cvt.rna.satfinite.tf32.f32 give for
// special and edge inputs on this GPU, and the difference x - hi that a 3xTF32 split forms.
#include <cstdint>
#include <cstdio>
#include <cstring>
__global__ void k(const uint32_t *in, uint32_t *out, int n) {
    int i = threadIdx.x;
    if (i >= n) return;
    float x = __uint_as_float(in[i]);
    uint32_t a, b;
    asm("cvt.rna.tf32.f32 %0, %1;" : "=r"(a) : "f"(x));
    asm("cvt.rna.satfinite.tf32.f32 %0, %1;" : "=r"(b) : "f"(x));
    out[4 * i] = a;
    out[4 * i + 1] = b;
    out[4 * i + 2] = __float_as_uint(x - __uint_as_float(a));
    out[4 * i + 3] = __float_as_uint(x - __uint_as_float(b));
}
int main() {
    const uint32_t in[] = {0x3F800000u, 0x3F800001u, 0x3F801000u, 0x3F801001u, 0x3FFFF000u,
                           0x7F7FFFFFu, 0x7F7FE000u, 0x7F7FF000u, 0x7F800000u, 0xFF800000u,
                           0x7F800001u, 0x7F801000u, 0x7FC00000u, 0xFF800001u, 0x00000001u,
                           0x00001000u, 0x80000000u};
    const int n = sizeof in / sizeof *in;
    uint32_t *di, *dout, out[4 * 32];
    cudaMalloc(&di, sizeof in);
    cudaMalloc(&dout, sizeof out);
    cudaMemcpy(di, in, sizeof in, cudaMemcpyHostToDevice);
    k<<<1, 32>>>(di, dout, n);
    cudaMemcpy(out, dout, sizeof out, cudaMemcpyDeviceToHost);
    printf("| x | cvt.rna | cvt.rna.satfinite | x - rna | x - satfinite |\n");
    for (int i = 0; i < n; i++)
        printf("| 0x%08X | 0x%08X | 0x%08X | 0x%08X | 0x%08X |\n", in[i], out[4 * i],
               out[4 * i + 1], out[4 * i + 2], out[4 * i + 3]);
    return 0;
}
