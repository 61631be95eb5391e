"""A Windows build's imports and exports (build-targets.sh, for the arm64 build, which mingw's
objdump cannot read): fails unless it imports only DLLs every Windows has and exports Node's entry
point. Prints the DLLs it imports."""
import sys

import pefile

SYSTEM = {"kernel32.dll", "advapi32.dll", "ntdll.dll", "msvcrt.dll", "ws2_32.dll", "bcryptprimitives.dll", "userenv.dll"}

pe = pefile.PE(sys.argv[1])
dlls = sorted({entry.dll.decode().lower() for entry in pe.DIRECTORY_ENTRY_IMPORT})
foreign = [d for d in dlls if d not in SYSTEM and not d.startswith("api-ms-win-")]
if foreign:
    sys.exit(f"pe-check: {sys.argv[1]} imports {', '.join(foreign)}, which Windows does not have")
exports = {s.name.decode() for s in pe.DIRECTORY_ENTRY_EXPORT.symbols if s.name}
if "napi_register_module_v1" not in exports:
    sys.exit(f"pe-check: {sys.argv[1]} does not export napi_register_module_v1")
print(" ".join(dlls))
