// The loop of chapter 2, as a program to trace: fill an int matrix row by row,
// then sum it column by column. book/cachesim.md records its memory accesses
// with valgrind's lackey, simulates them with cachesim, and sets the result
// beside cachegrind's own simulation of the same run.
#include <cstdio>

constexpr int kN = 128;  // 128 x 128 ints: 64 KiB, rows 512 bytes apart
static int matrix[kN][kN];

int main() {
    for (int i = 0; i < kN; ++i)
        for (int j = 0; j < kN; ++j) matrix[i][j] = i + j;
    long sum = 0;
    // [snippet: column_sum]
    for (int j = 0; j < kN; ++j)
        for (int i = 0; i < kN; ++i) sum += matrix[i][j];
    // [end: column_sum]
    // The matrix's place, for cachesim --region (the trace has only addresses).
    std::printf("sum %ld, matrix at %p, %zu bytes\n", sum, static_cast<void*>(matrix), sizeof matrix);
    return 0;
}
