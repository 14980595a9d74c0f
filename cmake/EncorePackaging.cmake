# Install rules, CMake config package and pkg-config files (filled in by the packaging step).
