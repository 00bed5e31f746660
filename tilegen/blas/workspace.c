#include "tg_workspace.h"

#include <pthread.h>
#include <stdlib.h>

typedef struct {
  void* ptr[TG_WS_SLOTS];
  size_t size[TG_WS_SLOTS];
} workspace;

static pthread_key_t ws_key;
static pthread_once_t ws_once = PTHREAD_ONCE_INIT;

static void ws_free(void* p) {
  workspace* ws = p;
  for (int i = 0; i < TG_WS_SLOTS; i++) free(ws->ptr[i]);
  free(ws);
}

static void ws_make_key(void) { pthread_key_create(&ws_key, ws_free); }

void* tg_workspace(int slot, size_t bytes) {
  pthread_once(&ws_once, ws_make_key);
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
