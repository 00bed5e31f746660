#include "tg_workspace.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>

typedef struct {
  void* ptr[TG_WS_ARRAY];
  size_t size[TG_WS_ARRAY];
} workspace;

static pthread_key_t ws_key;
static pthread_once_t ws_once = PTHREAD_ONCE_INIT;
static atomic_int ws_ready;  /* the key exists (and the library is not being unloaded) */

static void ws_free(void* p) {
  workspace* ws = p;
  for (int i = 0; i < TG_WS_SLOTS; i++) free(ws->ptr[i]);
  free(ws);
}

static void ws_make_key(void) {
  if (pthread_key_create(&ws_key, ws_free) == 0) atomic_store(&ws_ready, 1);
}

/* dlclose: a thread that used a workspace and exits after the library is unmapped would run
   ws_free there (SIGSEGV). Delete the key first; such threads' buffers leak, the library is
   going away. Priority 101 runs after the thread pool's destructor (200) has joined the
   workers, whose buffers their exit frees. After this every call gets NULL (the driver then
   computes unpacked), so a thread still calling in at exit stays correct. */
__attribute__((destructor(101))) static void ws_unload(void) {
  if (atomic_exchange(&ws_ready, 0)) pthread_key_delete(ws_key);
}

static atomic_int ws_fail;  /* test hook: every request fails, as when memory is exhausted */

void tilegen_x_workspace_fail(int on) { atomic_store(&ws_fail, on != 0); }

void* tg_workspace(int slot, size_t bytes) {
  if (atomic_load_explicit(&ws_fail, memory_order_relaxed)) return NULL;
  pthread_once(&ws_once, ws_make_key);
  if (!atomic_load_explicit(&ws_ready, memory_order_acquire)) return NULL;
  workspace* ws = pthread_getspecific(ws_key);
  if (ws == NULL) {
    ws = calloc(1, sizeof(*ws));
    if (ws == NULL || pthread_setspecific(ws_key, ws) != 0) {
      free(ws);
      return NULL;
    }
  }
  if (ws->size[slot] < bytes) {
    /* Grow by 1.5x at least, so a sequence of growing problems reallocates rarely. */
    size_t want = bytes + bytes / 2;
    want = (want + 4095) & ~(size_t) 4095;
    void* p = NULL;
    if (posix_memalign(&p, 4096, want) != 0) return NULL;
    free(ws->ptr[slot]);
    ws->ptr[slot] = p;
    ws->size[slot] = want;
  }
  return ws->ptr[slot];
}
