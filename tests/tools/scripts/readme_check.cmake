# cmake -DREADME=... -DEXAMPLE=... -P readme_check.cmake: fails unless README contains EXAMPLE verbatim.
file(READ ${README} readme)
file(READ ${EXAMPLE} example)
string(STRIP "${example}" example)
string(FIND "${readme}" "${example}" at)
if(at EQUAL -1)
  message(FATAL_ERROR "README.md does not contain ${EXAMPLE} verbatim; update its example block")
endif()
