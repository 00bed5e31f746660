/*
 * Private hooks: functions of libtilegen that tilegen's own Python bindings call (introspection,
 * tuning, test hooks), kept out of the library's exported symbols, which are exactly the
 * public API of tilegen.h.
 *
 * A header declares a hook as   TG_XAPI_FN(ret, name, (params))
 *  - inside the library it is an ordinary (hidden) function, and an entry {name, address} goes
 *    into the "tg_xapi" section, where tilegen_private_symbol() finds it by name;
 *  - in the bindings (compiled with -DTG_XAPI_CLIENT) the same line declares a function
 *    pointer of that name, bound by a load-time constructor, so `name(args)` calls the hook.
 * The section needs ELF (Linux, Android); elsewhere, and in the C SDK (TG_NO_PRIVATE_HOOKS),
 * hooks stay internal and unreachable: only the Python package uses them.
 */
#ifndef TG_XAPI_H
#define TG_XAPI_H

#include <stdio.h>
#include <stdlib.h>

#include "tilegen.h"

typedef struct tg_xapi_entry {
  const char* name;
  void (*fn)(void);
} tg_xapi_entry;

#if defined(TG_XAPI_CLIENT)

#define TG_XAPI_FN(ret, name, params)                                                   \
  static ret(*name) params;                                                             \
  __attribute__((constructor)) static void name##__tg_bind(void) {                      \
    name = (ret(*) params) tilegen_private_symbol(#name);                               \
    if (name == NULL) {                                                                 \
      fprintf(stderr, "tilegen: libtilegen has no private hook %s (a mismatched build)\n", \
              #name);                                                                   \
      abort();                                                                          \
    }                                                                                   \
  }

#else

#if defined(__ELF__) && !defined(TG_NO_PRIVATE_HOOKS)
#define TG_XAPI_REGISTER(name)                                                          \
  __attribute__((used, section("tg_xapi"), aligned(sizeof(void*)))) static const       \
      tg_xapi_entry name##__tg_entry = {#name, (void (*)(void)) name};
#else
#define TG_XAPI_REGISTER(name)
#endif

#define TG_XAPI_FN(ret, name, params) \
  ret name params;                    \
  TG_XAPI_REGISTER(name)

#endif

#endif
