// libFuzzer's entry for programs that have their own main
// (https://llvm.org/docs/LibFuzzer.html#using-libfuzzer-as-a-library).
// Linked by -sanitize=fuzzer; only the libFuzzer build of epf-fuzz calls it. SwiftPM gives an executable's main
// another name on Linux and points `main` at it, so libFuzzer's own main never runs: ours hands over to this.
#include <stddef.h>
#include <stdint.h>

int LLVMFuzzerRunDriver(int *argc, char ***argv, int (*callback)(const uint8_t *data, size_t size));
