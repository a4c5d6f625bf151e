// Compiled only to build the precompiled headers the tests of a folder share (see
// cmake/KvbePrecompiledHeaders.cmake); it defines nothing.
