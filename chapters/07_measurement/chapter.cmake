# Chapter 7 extras, included by add_chapter(07_measurement) (cmake/chapter.cmake).
# 1. The kernel source built twice: the same file, -O0 and -O2, as two object libraries.
#    The flag comes last on the command line, so it wins over the build type's -O3 or -O0.
set(ch07_dir ${CMAKE_SOURCE_DIR}/chapters/07_measurement)
foreach(level 0 2)
  add_library(ch07_kernel_o${level} OBJECT ${ch07_dir}/kernel/sum_kernel.cpp)
  target_compile_options(ch07_kernel_o${level} PRIVATE -O${level})
  target_compile_definitions(ch07_kernel_o${level} PRIVATE CH07_KERNEL_NS=o${level})
  target_include_directories(ch07_kernel_o${level} PUBLIC ${ch07_dir}/kernel)
  target_link_libraries(ch07_measurement_logic PUBLIC ch07_kernel_o${level})
endforeach()
target_include_directories(ch07_measurement_logic PUBLIC ${ch07_dir}/kernel)

# 2. ch07_walk: a tiny program that runs one of the walks, for cachegrind and perf to count.
add_executable(ch07_walk ${ch07_dir}/walk/walk_main.cpp)
target_link_libraries(ch07_walk PRIVATE ch07_kernel_o2 cachebook)
target_include_directories(ch07_walk PRIVATE ${ch07_dir}/kernel)
add_dependencies(ch07_measurement ch07_walk)
target_compile_definitions(ch07_measurement_logic PRIVATE CH07_WALK_PATH="$<TARGET_FILE:ch07_walk>")
