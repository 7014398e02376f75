// spawnbench N BIN [ARGS...] [-- BIN [ARGS...]]...: starts each command N times, the
// commands interleaved round by round (posix_spawn, output to /dev/null, waitpid), and
// prints per command the median time from spawn to reaped, with the 10th and 90th
// percentiles. For start-up figures (scripts/bench/bench-startup); never for assertions.
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <fcntl.h>
#include <unistd.h>
extern char **environ;
static int cmp(const void *a, const void *b) { double x = *(double*)a, y = *(double*)b; return x < y ? -1 : x > y; }
int main(int argc, char **argv) {
  if (argc < 3 || atoi(argv[1]) < 1) { fprintf(stderr, "usage: spawnbench N BIN [ARGS...] [-- BIN [ARGS...]]...\n"); return 2; }
  int n = atoi(argv[1]);
  // argv[2..] : groups separated by "--" ; rounds interleaved
  int groups = 0; char **cmds[16]; cmds[groups++] = &argv[2];
  for (int i = 2; i < argc; i++) if (strcmp(argv[i], "--") == 0) {
    if (groups == 16 || i + 1 == argc) { fprintf(stderr, "spawnbench: at most 16 commands, each with a program\n"); return 2; }
    argv[i] = NULL; cmds[groups++] = &argv[i+1];
  }
  double *t[16]; for (int g = 0; g < groups; g++) t[g] = malloc(sizeof(double) * n);
  posix_spawn_file_actions_t fa; posix_spawn_file_actions_init(&fa);
  posix_spawn_file_actions_addopen(&fa, 1, "/dev/null", O_WRONLY, 0);
  posix_spawn_file_actions_addopen(&fa, 2, "/dev/null", O_WRONLY, 0);
  for (int i = 0; i < n; i++) for (int g = 0; g < groups; g++) {
    struct timespec a, b; pid_t pid; int st;
    clock_gettime(CLOCK_MONOTONIC, &a);
    if (posix_spawn(&pid, cmds[g][0], &fa, NULL, cmds[g], environ) != 0) { perror("spawn"); return 1; }
    waitpid(pid, &st, 0);
    clock_gettime(CLOCK_MONOTONIC, &b);
    t[g][i] = (b.tv_sec - a.tv_sec) * 1e3 + (b.tv_nsec - a.tv_nsec) / 1e6;
  }
  for (int g = 0; g < groups; g++) { qsort(t[g], n, sizeof(double), cmp);
    printf("%-40s median %.3f ms  p10 %.3f  p90 %.3f\n", cmds[g][0], t[g][n/2], t[g][n/10], t[g][n*9/10]); }
}
