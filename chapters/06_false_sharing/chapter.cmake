# false_sharing.cpp reads std::hardware_destructive_interference_size, which GCC warns about
# wherever it is included rather than compiled as the main file (its value may differ between
# compilers): that file is compiled on its own, not in a batch (CACHEBOOK_UNITY).
set_source_files_properties(${src}/false_sharing.cpp PROPERTIES SKIP_UNITY_BUILD_INCLUSION ON)
