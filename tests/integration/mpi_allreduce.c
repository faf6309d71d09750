// SPDX-License-Identifier: GPL-2.0
/*
 * An MPI_Allreduce loop for tests/{integration,guest}/trace_mpi.sh and
 * tests/guest/cluster_mpi.sh: usage mpi_allreduce [ROUNDS [SLOW_RANK
 * LATE_MS [COUNT [GO_DIR]]]]. Each round sums COUNT doubles (default and at
 * most MAX_COUNT); rank i % size arrives 2 ms late, or with SLOW_RANK that
 * rank LATE_MS late in every round, so the others wait for it in the TCP
 * transport's calls, the way a straggler stalls a collective.
 *
 * The first collective also waits for whichever rank mpirun started last
 * and for the TCP transport's connections, made on first use. With GO_DIR
 * that start is kept out of the rounds: the ranks run one allreduce, each
 * then creates GO_DIR/ready.RANK and waits for GO_DIR/go to exist, so that
 * a trace started in between sees only the rounds.
 */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

#define MAX_COUNT	16384

static void wait_for_go(const char *dir, int rank, double *in, double *out, int count)
{
	const struct timespec poll = { .tv_nsec = 1000000 };
	char path[4096];
	FILE *f;

	MPI_Allreduce(in, out, count, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
	snprintf(path, sizeof(path), "%s/ready.%d", dir, rank);
	f = fopen(path, "w");
	if (!f || fclose(f)) {
		perror(path);
		MPI_Abort(MPI_COMM_WORLD, 1);
	}
	snprintf(path, sizeof(path), "%s/go", dir);
	while (access(path, F_OK))
		nanosleep(&poll, NULL);
}

int main(int argc, char **argv)
{
	static double in[MAX_COUNT], out[MAX_COUNT];
	struct timespec late = { .tv_nsec = 2000000 };
	int rank, size, rounds, slow = -1, count = MAX_COUNT, i, k;

	MPI_Init(&argc, &argv);
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	MPI_Comm_size(MPI_COMM_WORLD, &size);
	rounds = argc > 1 ? atoi(argv[1]) : 40;
	if (argc > 3) {
		slow = atoi(argv[2]);
		late.tv_sec = atoi(argv[3]) / 1000;
		late.tv_nsec = atoi(argv[3]) % 1000 * 1000000L;
	}
	if (argc > 4 && atoi(argv[4]) > 0 && atoi(argv[4]) < MAX_COUNT)
		count = atoi(argv[4]);
	for (k = 0; k < count; k++)
		in[k] = rank + k;
	if (argc > 5)
		wait_for_go(argv[5], rank, in, out, count);
	for (i = 0; i < rounds; i++) {
		if (slow < 0 ? i % size == rank : slow == rank)
			nanosleep(&late, NULL);
		MPI_Allreduce(in, out, count, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
	}
	/* sum over ranks of (rank + k) = size * k + size * (size - 1) / 2 */
	for (k = 0; k < count; k++)
		if (out[k] != (double)size * k + size * (size - 1) / 2.0) {
			fprintf(stderr, "rank %d: wrong sum at %d\n", rank, k);
			MPI_Abort(MPI_COMM_WORLD, 1);
		}
	MPI_Finalize();
	return 0;
}
