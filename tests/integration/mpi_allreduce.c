// SPDX-License-Identifier: GPL-2.0
/*
 * An MPI_Allreduce loop for tests/{integration,guest}/trace_mpi.sh: in
 * round i rank i % size arrives 2 ms late, so the others block for it in
 * the TCP transport's calls, the way a straggler stalls a collective.
 */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#define COUNT	16384

int main(int argc, char **argv)
{
	static double in[COUNT], out[COUNT];
	struct timespec late = { .tv_nsec = 2000000 };
	int rank, size, rounds, i, k;

	MPI_Init(&argc, &argv);
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	MPI_Comm_size(MPI_COMM_WORLD, &size);
	rounds = argc > 1 ? atoi(argv[1]) : 40;
	for (k = 0; k < COUNT; k++)
		in[k] = rank + k;
	for (i = 0; i < rounds; i++) {
		if (i % size == rank)
			nanosleep(&late, NULL);
		MPI_Allreduce(in, out, COUNT, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
	}
	/* sum over ranks of (rank + k) = size * k + size * (size - 1) / 2 */
	for (k = 0; k < COUNT; k++)
		if (out[k] != (double)size * k + size * (size - 1) / 2.0) {
			fprintf(stderr, "rank %d: wrong sum at %d\n", rank, k);
			MPI_Abort(MPI_COMM_WORLD, 1);
		}
	MPI_Finalize();
	return 0;
}
