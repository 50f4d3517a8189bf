#pragma once
// What each tool defines for tools/common/main.cpp, which checks the CPU and then calls toolMain.

/// The executable's name, for error messages ("vtp-world: ..."). Define it as `extern const char* const kToolName`
/// (or include this header first), since a namespace-scope const has internal linkage otherwise.
extern const char* const kToolName;

/// The tool proper, run once the CPU check has passed. Returns the process exit code.
int toolMain(int argc, char** argv);
