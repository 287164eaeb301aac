# simfuzz_add_program's build-time check of a program's relocatable object
# (cmake -DREADELF=... -DOBJ=... -DNAME=... -P program_check.cmake): what
# the runtime cannot give each node a copy of is refused here, by name.
execute_process(COMMAND ${READELF} -SW ${OBJ} OUTPUT_VARIABLE sections RESULT_VARIABLE rc)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "simfuzz_add_program(${NAME}): ${READELF} cannot read ${OBJ}")
endif()
if(sections MATCHES "[ \\]]\\.t(data|bss)")
  message(FATAL_ERROR "simfuzz_add_program(${NAME}): the program has thread-local variables "
    "(_Thread_local, __thread), which simfuzz does not give each node a copy of yet")
endif()
