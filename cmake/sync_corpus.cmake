# sync_corpus.cmake: make a build's seed corpus match its source directory.
#   cmake -DSRC=<dir> -DOUT=<dir> (-DPROTOC=<protoc> -DPROTO_DIR=<dir> |
#         -DENCODER=<simfuzz>) -P sync_corpus.cmake
# SRC/<x>.textproto is encoded to OUT/<x>.pb (when the source is newer),
# SRC/<x>.pb is copied, and OUT/*.pb without a source any more are removed.
# Each output is written to a temporary file and renamed, so a failed or
# interrupted encode never leaves half a seed.
cmake_minimum_required(VERSION 3.21)
file(MAKE_DIRECTORY ${OUT})
set(want "")
if(IS_DIRECTORY ${SRC})
  file(GLOB texts ${SRC}/*.textproto)
  file(GLOB bins ${SRC}/*.pb)
else()
  set(texts "")
  set(bins "")
endif()
foreach(seed ${texts} ${bins})
  get_filename_component(base ${seed} NAME_WE)
  get_filename_component(ext ${seed} EXT)
  set(out ${OUT}/${base}.pb)
  if(out IN_LIST want)
    message(FATAL_ERROR "seed corpus: two seeds named ${base} in ${SRC}")
  endif()
  list(APPEND want ${out})
  if(EXISTS ${out} AND NOT ${seed} IS_NEWER_THAN ${out})
    continue()
  endif()
  set(tmp ${out}.tmp)
  if(ext STREQUAL ".pb")
    file(COPY_FILE ${seed} ${tmp})
    set(rc 0)
  elseif(PROTOC)
    execute_process(COMMAND ${PROTOC} --encode=simfuzz.Scenario -I${PROTO_DIR}
                            ${PROTO_DIR}/scenario.proto
                    INPUT_FILE ${seed} OUTPUT_FILE ${tmp} RESULT_VARIABLE rc ERROR_VARIABLE err)
  else()
    execute_process(COMMAND ${ENCODER} encode ${seed} -o ${tmp}
                    RESULT_VARIABLE rc OUTPUT_QUIET ERROR_VARIABLE err)
  endif()
  if(NOT rc EQUAL 0)
    file(REMOVE ${tmp})
    message(FATAL_ERROR "seed corpus: cannot encode ${seed}: ${err}")
  endif()
  file(RENAME ${tmp} ${out})
endforeach()
file(GLOB have ${OUT}/*.pb)
foreach(f ${have})
  if(NOT f IN_LIST want)
    file(REMOVE ${f})
  endif()
endforeach()
