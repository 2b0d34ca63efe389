# add_chapter(NN_slug): builds chNN_slug from chapters/NN_slug/main.cpp and a static
# library chNN_slug_logic of the directory's other .cpp files (the logic, shared with the
# tests and the exercise graders), registers the chapter for the golden test, adds its
# exercises when it has exercises/grader.cpp, and last includes chapters/NN_slug/chapter.cmake
# when it exists: the chapter's own build steps (extra flags, extra programs). That file runs
# inside this function: targets it makes are global, variables it sets stay in it.
function(add_chapter dir)
  set(src ${CMAKE_SOURCE_DIR}/chapters/${dir})
  set(logic ch${dir}_logic)
  file(GLOB logic_sources CONFIGURE_DEPENDS ${src}/*.cpp)
  list(REMOVE_ITEM logic_sources ${src}/main.cpp)
  add_library(${logic} STATIC ${logic_sources})
  target_include_directories(${logic} PUBLIC ${src})
  target_link_libraries(${logic} PUBLIC cachebook)
  add_executable(ch${dir} ${src}/main.cpp)
  target_link_libraries(ch${dir} PRIVATE ${logic})
  # main.cpp prints what the lab measured and times nothing (tests/literate_test.py checks that it
  # reads no clock): at -O1 it compiles in half the time it takes at -O3. GCC's -O1 analysis
  # reports some std::optional values as maybe uninitialized where -O3 sees them set.
  set_source_files_properties(${src}/main.cpp PROPERTIES COMPILE_OPTIONS
    "$<$<CONFIG:Release>:-O1>;$<$<AND:$<CONFIG:Release>,$<CXX_COMPILER_ID:GNU>>:-Wno-maybe-uninitialized>")
  set(CACHEBOOK_CHAPTERS ${CACHEBOOK_CHAPTERS} ${dir} PARENT_SCOPE)
  if(EXISTS ${src}/exercises/grader.cpp)
    add_exercise(${dir})
    set(CACHEBOOK_EXERCISES ${CACHEBOOK_EXERCISES} PARENT_SCOPE)
  endif()
  if(EXISTS ${src}/chapter.cmake)
    include(${src}/chapter.cmake)
  endif()
endfunction()

# add_exercise(NN_slug): two graders from exercises/grader.cpp (the cases the handout shows)
# and exercises/held_back.cpp (the cases only this copy runs), one linked with the student's
# starter.cpp (what `make grade` scores), one with solution.cpp (which the test suite
# requires to score full marks). The handout (tools/teaching/handout.py) builds its grader from
# grader.cpp alone, with the files that exercises/exercises.json lists.
function(add_exercise dir)
  set(ex ${CMAKE_SOURCE_DIR}/chapters/${dir}/exercises)
  set(cases ${ex}/grader.cpp)
  if(EXISTS ${ex}/held_back.cpp)
    list(APPEND cases ${ex}/held_back.cpp)
  endif()
  # The cases are compiled once and linked into both graders.
  set(c grade_ch${dir}_cases)
  add_library(${c} OBJECT ${cases})
  target_include_directories(${c} PRIVATE ${ex})
  target_link_libraries(${c} PRIVATE ch${dir}_logic cachebook_grader)
  foreach(which starter solution)
    set(t grade_ch${dir}_${which})
    add_executable(${t} $<TARGET_OBJECTS:${c}> ${ex}/${which}.cpp)
    target_include_directories(${t} PRIVATE ${ex})
    target_link_libraries(${t} PRIVATE ch${dir}_logic cachebook_grader)
  endforeach()
  add_test(NAME exercise.${dir}.solution_scores_full COMMAND grade_ch${dir}_solution --require-full)
  # 77: an exercise could not run on this machine (it says why) and every other one passed.
  set_tests_properties(exercise.${dir}.solution_scores_full PROPERTIES LABELS exercise SKIP_RETURN_CODE 77)
  # The starter, as handed out, must compile and must not already pass.
  add_test(NAME exercise.${dir}.starter_is_not_solved COMMAND grade_ch${dir}_starter --require-full)
  set_tests_properties(exercise.${dir}.starter_is_not_solved PROPERTIES LABELS exercise WILL_FAIL TRUE)
  set(CACHEBOOK_EXERCISES ${CACHEBOOK_EXERCISES} ${dir} PARENT_SCOPE)
endfunction()
