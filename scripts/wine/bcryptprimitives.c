/* Test-only shim for running Windows builds under wine 8 (Debian 12), which lacks
 * bcryptprimitives.dll: Rust's standard library (1.78 and later) imports ProcessPrng from it for
 * its random numbers (HashMap keys). This DLL gives ProcessPrng on top of advapi32's RtlGenRandom
 * (SystemFunction036), which wine has. Built and put into the wine prefix by scripts/wine.mjs;
 * never shipped. Real Windows (10 and later) has the DLL. */
#include <windows.h>

BOOLEAN WINAPI SystemFunction036(PVOID buffer, ULONG length);

__declspec(dllexport) BOOL WINAPI ProcessPrng(PBYTE data, SIZE_T len) {
  while (len > 0) {
    ULONG n = len > 0x10000000 ? 0x10000000 : (ULONG)len;
    if (!SystemFunction036(data, n)) return FALSE;
    data += n;
    len -= n;
  }
  return TRUE;
}
