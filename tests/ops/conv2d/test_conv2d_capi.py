"""The convolution C API of tilegen.h through a C program linked to the installed libtilegen:
tilegen_conv2d_f32/f64 and the packed plans against a plain float64 loop (both layouts,
strides, padding, dilation, groups, depthwise, 1x1, activations), a plan run by two threads at
once, and every invalid parameter returning -p with the output untouched."""
import cprog


def test_conv_c_api(tmp_path):
    exe = cprog.build("conv_capi_driver.c", tmp_path / "conv_capi_driver", link_tilegen=True)
    r = cprog.run([exe])
    assert r.returncode == 0, r.stdout + r.stderr
    assert r.stdout.strip().splitlines()[-1].startswith("DONE ")
    checks, failures = map(int, r.stdout.split()[-2:])
    assert failures == 0 and checks > 1000, r.stdout
