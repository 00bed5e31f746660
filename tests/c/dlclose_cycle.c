/*
 * libtilegen loaded and unloaded at run time (a plug-in host, tests/test_threads.py):
 *   1. dlopen, a multi-threaded sgemm_, dlclose -- many times: the pool's workers must be gone
 *      before the code they run is unmapped;
 *   2. a thread calls sgemm_ (so it owns packing buffers in thread-local storage), the library
 *      is closed, then the thread exits: no destructor may run in the unmapped library.
 * Prints "threads=<threads left in the process>" and "ok".
 */
#include <dirent.h>
#include <dlfcn.h>
#include <pthread.h>
#include <semaphore.h>
#include <stdio.h>
#include <stdlib.h>

typedef void (*sgemm_fn)(const char*, const char*, const int*, const int*, const int*,
                         const float*, const float*, const int*, const float*, const int*,
                         const float*, float*, const int*);
typedef void (*set_threads_fn)(int);

static const char* lib_path;
static sgemm_fn sgemm;
static sem_t called, closed;
static float *a, *b, *c;

static void* open_lib(void) {
  void* h = dlopen(lib_path, RTLD_NOW | RTLD_LOCAL);
  if (h == NULL) {
    fprintf(stderr, "dlopen: %s\n", dlerror());
    exit(2);
  }
  sgemm = (sgemm_fn) dlsym(h, "sgemm_");
  ((set_threads_fn) dlsym(h, "tilegen_set_num_threads"))(2);
  return h;
}

static void call(int n) {
  const float alpha = 1, beta = 0;
  sgemm("N", "N", &n, &n, &n, &alpha, a, &n, b, &n, &beta, c, &n);
}

static void* caller_thread(void* arg) {
  call(64);  /* single-threaded: runs on this thread, whose TLS gets the buffers */
  sem_post(&called);
  sem_wait(&closed);
  return NULL;
}

static int tasks(void) {
  DIR* d = opendir("/proc/self/task");
  int n = 0;
  if (d == NULL) return -1;
  for (struct dirent* e; (e = readdir(d)) != NULL;)
    if (e->d_name[0] != '.') n++;
  closedir(d);
  return n;
}

int main(int argc, char** argv) {
  lib_path = argv[1];
  const int n = 256;
  a = calloc(n * n, sizeof(float));
  b = calloc(n * n, sizeof(float));
  c = calloc(n * n, sizeof(float));
  for (int it = 0; it < 100; it++) {
    void* h = open_lib();
    call(n);  /* 2*256^3 flops: 2 threads */
    if (dlclose(h) != 0) return 3;
  }
  printf("threads=%d\n", tasks());

  sem_init(&called, 0, 0);
  sem_init(&closed, 0, 0);
  void* h = open_lib();
  pthread_t t;
  pthread_create(&t, NULL, caller_thread, NULL);
  sem_wait(&called);
  if (dlclose(h) != 0) return 3;
  sem_post(&closed);
  pthread_join(t, NULL);
  puts("ok");
  return 0;
}
