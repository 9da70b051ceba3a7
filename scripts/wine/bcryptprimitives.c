/* A stand-in for Windows' bcryptprimitives.dll under Wine 8, which lacks
 * ProcessPrng: Go 1.26 binaries call it for random bytes at start and abort
 * without it. It forwards to RtlGenRandom (advapi32's SystemFunction036). */
#include <windows.h>

typedef BOOLEAN (WINAPI *RtlGenRandomFn)(PVOID, ULONG);

__declspec(dllexport) BOOL WINAPI ProcessPrng(PBYTE data, SIZE_T len) {
	static RtlGenRandomFn gen;
	if (!gen)
		gen = (RtlGenRandomFn)GetProcAddress(LoadLibraryA("advapi32.dll"), "SystemFunction036");
	while (len > 0) {
		ULONG n = len > 0x10000000 ? 0x10000000 : (ULONG)len;
		if (!gen || !gen(data, n))
			return FALSE;
		data += n;
		len -= n;
	}
	return TRUE;
}

BOOL WINAPI DllMain(HINSTANCE h, DWORD reason, LPVOID reserved) { return TRUE; }
