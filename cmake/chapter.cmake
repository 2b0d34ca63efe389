# add_chapter(NN_slug slug): builds chNN_slug from chapters/NN_slug/{slug.cpp,main.cpp},
# an object library chNN_slug_logic (the logic, shared with the tests and the
# exercise graders), and registers the chapter for the golden test.
function(add_chapter dir slug)
  set(src ${CMAKE_SOURCE_DIR}/chapters/${dir})
  set(logic ch${dir}_logic)
  file(GLOB logic_sources CONFIGURE_DEPENDS ${src}/*.cpp)
  list(REMOVE_ITEM logic_sources ${src}/main.cpp)
  add_library(${logic} STATIC ${logic_sources})
  target_include_directories(${logic} PUBLIC ${src})
  target_link_libraries(${logic} PUBLIC cachebook)
  add_executable(ch${dir} ${src}/main.cpp)
  target_link_libraries(ch${dir} PRIVATE ${logic})
  set(CACHEBOOK_CHAPTERS ${CACHEBOOK_CHAPTERS} ${dir} PARENT_SCOPE)
  if(EXISTS ${src}/exercises/CMakeLists.txt)
    add_subdirectory(${src}/exercises ${CMAKE_BINARY_DIR}/exercises/${dir})
  endif()
endfunction()
