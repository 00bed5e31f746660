/* Drives tests/c/amx_model.h (force-included) for tests/test_amx_model.py: reads a tile config
   (64 bytes), then tiles 0 (C), 1 (A) and 2 (B) as 16 rows x 64 bytes each from stdin; loads them
   (C from a 64-byte stride, A and B likewise), runs the product named by argv[1] (bf16, ss, su,
   us, uu) as C += A B, stores C and writes all of tile 0's 16 x 64 bytes (a buffer filled with
   0xAB first: what the store leaves alone shows) to stdout. argv[1] "fault-shape" runs a product
   whose shapes do not chain (must abort). */
#include <stdint.h>
#include <stdio.h>
#include <string.h>

int main(int argc, char** argv) {
  uint8_t cfg[64], c[1024], a[1024], b[1024], out[1024];
  if (argc < 2 || fread(cfg, 1, 64, stdin) != 64 || fread(c, 1, 1024, stdin) != 1024 ||
      fread(a, 1, 1024, stdin) != 1024 || fread(b, 1, 1024, stdin) != 1024)
    return 2;
  _tile_loadconfig(cfg);
  _tile_loadd(0, c, 64);
  _tile_loadd(1, a, 64);
  _tile_loadd(2, b, 64);
  const char* op = argv[1];
  if (!strcmp(op, "bf16")) _tile_dpbf16ps(0, 1, 2);
  else if (!strcmp(op, "ss")) _tile_dpbssd(0, 1, 2);
  else if (!strcmp(op, "su")) _tile_dpbsud(0, 1, 2);
  else if (!strcmp(op, "us")) _tile_dpbusd(0, 1, 2);
  else if (!strcmp(op, "uu")) _tile_dpbuud(0, 1, 2);
  else if (!strcmp(op, "fault-shape")) _tile_dpbssd(0, 2, 1);
  else return 2;
  memset(out, 0xAB, sizeof(out));
  _tile_stored(0, out, 64);
  _tile_release();
  fwrite(out, 1, sizeof(out), stdout);
  return 0;
}
