# embed.cmake: turn the HTML template parts into C string constants.
# cmake -DHEAD=... -DTAIL=... -DOUT=... -P embed.cmake
function(to_c_string in var out)
  file(READ ${in} text)
  string(REPLACE "\\" "\\\\" text "${text}")
  string(REPLACE "\"" "\\\"" text "${text}")
  string(REPLACE "\n" "\\n\"\n\"" text "${text}")
  file(APPEND ${out} "const char ${var}[] =\n\"${text}\";\n")
endfunction()
file(WRITE ${OUT} "/* generated from harness/trace_html*.in by cmake/embed.cmake */\n")
file(APPEND ${OUT} "extern const char sf_trace_html_head[], sf_trace_html_tail[];\n")
to_c_string(${HEAD} sf_trace_html_head ${OUT})
to_c_string(${TAIL} sf_trace_html_tail ${OUT})
