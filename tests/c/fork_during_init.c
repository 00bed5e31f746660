/*
 * fork() while another thread is inside tilegen's one-time initialisation (tests/
 * test_dispatch.py). Thread A makes the first BLAS call with TILEGEN_VERBOSE=1 and stderr a full
 * pipe, so it blocks while logging the kernels it chose -- inside the initialisation lock. The
 * main thread forks meanwhile (a drainer empties the pipe shortly after). The child, which has
 * no thread A, must still be able to call BLAS: exit 0 when it could, 1 when it hung.
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

void sgemm_(const char*, const char*, const int*, const int*, const int*, const float*,
            const float*, const int*, const float*, const int*, const float*, float*, const int*);

static int pipe_fd[2];

static float call(void) {
  const int n = 2;
  const float a[4] = {1, 2, 3, 4}, alpha = 1, beta = 0;
  float c[4];
  sgemm_("N", "N", &n, &n, &n, &alpha, a, &n, a, &n, &beta, c, &n);
  return c[0];
}

static void* first_call(void* arg) {
  call();
  return NULL;
}

static void* drain(void* arg) {
  usleep(300000);
  fcntl(pipe_fd[0], F_SETFL, fcntl(pipe_fd[0], F_GETFL) | O_NONBLOCK);
  char buf[4096];
  for (int i = 0; i < 3000; i++) {
    while (read(pipe_fd[0], buf, sizeof(buf)) > 0) {
    }
    usleep(1000);
  }
  return NULL;
}

int main(void) {
  if (pipe(pipe_fd) != 0) return 2;
  const int flags = fcntl(pipe_fd[1], F_GETFL);
  fcntl(pipe_fd[1], F_SETFL, flags | O_NONBLOCK);
  char junk[4096];
  memset(junk, '.', sizeof(junk));
  while (write(pipe_fd[1], junk, sizeof(junk)) > 0) {
  }
  fcntl(pipe_fd[1], F_SETFL, flags);
  const int saved_stderr = dup(2);
  dup2(pipe_fd[1], 2);

  pthread_t a, d;
  pthread_create(&a, NULL, first_call, NULL);
  usleep(100000); /* thread A is now blocked writing the log, inside the initialisation */
  pthread_create(&d, NULL, drain, NULL);
  const pid_t pid = fork();
  if (pid == 0) {
    const int null = open("/dev/null", O_WRONLY);
    dup2(null, 2);
    alarm(5);
    _exit(call() == 7.0f ? 0 : 3);
  }
  int status = 0;
  waitpid(pid, &status, 0);
  pthread_join(a, NULL);
  dup2(saved_stderr, 2);
  if (WIFSIGNALED(status)) {
    printf("child hung in its first BLAS call (killed by signal %d)\n", WTERMSIG(status));
    return 1;
  }
  printf("child exit %d\n", WEXITSTATUS(status));
  return WEXITSTATUS(status) == 0 ? 0 : 1;
}
