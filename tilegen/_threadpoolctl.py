"""Lets threadpoolctl see and limit tilegen's thread pool, as it does OpenBLAS's."""


def register() -> None:
    try:
        import threadpoolctl
    except ImportError:
        return
    if not hasattr(threadpoolctl, "register"):  # custom controllers need threadpoolctl >= 3.5
        return

    class TilegenController(threadpoolctl.LibController):
        user_api = "blas"
        internal_api = "tilegen"
        filename_prefixes = ("libtilegen",)
        check_symbols = ("tilegen_get_num_threads", "tilegen_set_num_threads", "sgemm_")

        def get_num_threads(self):
            return self.dynlib.tilegen_get_num_threads()

        def set_num_threads(self, num_threads):
            self.dynlib.tilegen_set_num_threads(int(num_threads))

        def get_version(self):
            from ._version import __version__

            return __version__

        def set_additional_attributes(self):
            self.architecture = self.dynlib.tilegen_isa_name
            self.architecture.restype = __import__("ctypes").c_char_p
            self.architecture = self.architecture().decode()

    threadpoolctl.register(TilegenController)
