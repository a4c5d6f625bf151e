// Saves a large file with core's atomic write, slowly enough to be killed in the middle:
// save_helper PATH MEGABYTES. Used by tst_atomic_save.
#include "kvbe/base/json_text.h"

#include <cstdlib>
#include <iostream>
#include <string>

int main(int argc, char** argv) {
    if (argc != 3) return 2;
    const std::string payload(static_cast<size_t>(std::atoi(argv[2])) * 1024 * 1024, 'n');
    const auto st = kvbe::writeFileAtomically(argv[1], payload);
    if (!st) std::cerr << st.message() << "\n";
    return st ? 0 : 1;
}
