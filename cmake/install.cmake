# SPDX-License-Identifier: MIT
# What `cmake --install` puts where (FHS, under CMAKE_INSTALL_PREFIX), by component: one
# component per Debian package (cmake/package.cmake). The programs find their data beside
# their bin folder (util_data_path), so every prefix works.
set(MRCFAB_DATADIR ${CMAKE_INSTALL_DATADIR}/mrcfab)
set(MRCFAB_CONFDIR ${CMAKE_INSTALL_FULL_SYSCONFDIR}/mrcfab)
# systemd units: /lib/systemd/system for a /usr install (Debian 12 ships them there), else
# under the prefix
if(CMAKE_INSTALL_PREFIX STREQUAL "/usr")
  set(MRCFAB_UNITDIR_DEFAULT /lib/systemd/system)
else()
  set(MRCFAB_UNITDIR_DEFAULT ${CMAKE_INSTALL_PREFIX}/lib/systemd/system)
endif()
set(MRCFAB_UNITDIR ${MRCFAB_UNITDIR_DEFAULT} CACHE PATH "where the systemd units go")

install(TARGETS mrc-controller RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR} COMPONENT controller)
install(TARGETS mrc-agent mrc-perf RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR} COMPONENT agent)
install(TARGETS mrc-probe RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR} COMPONENT probe)
install(TARGETS mrcctl mrc-sim mrc-decode mrc-pair RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR}
        COMPONENT tools)

# data: the dashboard with the controller, the schemas with the tools, the example
# topologies with every package (mrcfab-common)
install(DIRECTORY ${PROJECT_SOURCE_DIR}/web/ DESTINATION ${MRCFAB_DATADIR}/web COMPONENT controller)
install(FILES ${PROJECT_SOURCE_DIR}/deploy/grafana/mrcfab.json DESTINATION ${MRCFAB_DATADIR}/grafana
        COMPONENT controller)
install(DIRECTORY ${PROJECT_SOURCE_DIR}/schemas/ DESTINATION ${MRCFAB_DATADIR}/schemas
        COMPONENT tools)
install(FILES ${PROJECT_SOURCE_DIR}/deploy/topologies/lab.json
              ${PROJECT_SOURCE_DIR}/deploy/topologies/full.json
        DESTINATION ${MRCFAB_DATADIR}/topologies COMPONENT common)
install(FILES ${PROJECT_SOURCE_DIR}/deploy/bash-completion/mrcctl
        DESTINATION ${CMAKE_INSTALL_DATADIR}/bash-completion/completions COMPONENT tools
        OPTIONAL)

# config files (conffiles in the packages), one per daemon
install(FILES ${PROJECT_SOURCE_DIR}/deploy/config/controller.conf DESTINATION ${MRCFAB_CONFDIR}
        COMPONENT controller)
install(FILES ${PROJECT_SOURCE_DIR}/deploy/config/agent.conf DESTINATION ${MRCFAB_CONFDIR}
        COMPONENT agent)
install(FILES ${PROJECT_SOURCE_DIR}/deploy/config/probe-node.conf
              ${PROJECT_SOURCE_DIR}/deploy/config/localize.conf
        DESTINATION ${MRCFAB_CONFDIR} COMPONENT probe)

# systemd units, with the programs' installed paths
set(BINDIR ${CMAKE_INSTALL_FULL_BINDIR})
foreach(unit mrc-controller.service:controller mrc-agent.service:agent
             mrc-probe-node.service:probe mrc-localize@.service:probe)
  string(REPLACE ":" ";" pair ${unit})
  list(GET pair 0 file)
  list(GET pair 1 comp)
  configure_file(${PROJECT_SOURCE_DIR}/deploy/systemd/${file}
                 ${CMAKE_BINARY_DIR}/systemd/${file} @ONLY)
  install(FILES ${CMAKE_BINARY_DIR}/systemd/${file} DESTINATION ${MRCFAB_UNITDIR}
          COMPONENT ${comp})
endforeach()

# man pages, from scdoc sources (docs/man/NAME.SECTION.scd), for the component that ships
# the program or file they describe
option(MRCFAB_MAN "Build the man pages (needs scdoc)" ON)
if(MRCFAB_MAN)
  find_program(SCDOC scdoc REQUIRED)
  # the pages' date is the last commit's, so that two builds of one tree give the same pages
  execute_process(COMMAND git -C ${PROJECT_SOURCE_DIR} log -1 --format=%ct
                  OUTPUT_VARIABLE MRCFAB_SOURCE_DATE OUTPUT_STRIP_TRAILING_WHITESPACE ERROR_QUIET)
  if(MRCFAB_SOURCE_DATE STREQUAL "")
    set(MRCFAB_SOURCE_DATE 0)
  endif()
  file(GLOB MRCFAB_MAN_SOURCES CONFIGURE_DEPENDS ${PROJECT_SOURCE_DIR}/docs/man/*.scd)
  set(MRCFAB_MAN_PAGES)
  file(MAKE_DIRECTORY ${CMAKE_BINARY_DIR}/man)
  foreach(src IN LISTS MRCFAB_MAN_SOURCES)
    get_filename_component(page ${src} NAME_WLE)
    set(out ${CMAKE_BINARY_DIR}/man/${page})
    # tidy.awk drops the empty paragraph macros scdoc writes, so that mandoc -T lint is clean
    add_custom_command(OUTPUT ${out} ${out}.gz
                       COMMAND ${CMAKE_COMMAND} -E env SOURCE_DATE_EPOCH=${MRCFAB_SOURCE_DATE}
                               ${SCDOC} < ${src} > ${out}.raw
                       COMMAND awk -f ${PROJECT_SOURCE_DIR}/docs/man/tidy.awk ${out}.raw > ${out}
                       COMMAND gzip -9nc ${out} > ${out}.gz
                       DEPENDS ${src} ${PROJECT_SOURCE_DIR}/docs/man/tidy.awk
                       COMMENT "man page ${page}" VERBATIM)
    list(APPEND MRCFAB_MAN_PAGES ${out})
    string(REGEX REPLACE ".*\\.([1-8])$" "\\1" section ${page})
    if(page MATCHES "^mrc-controller\\.")
      set(comp controller)
    elseif(page MATCHES "^mrc-(agent|perf)\\.")
      set(comp agent)
    elseif(page MATCHES "^mrc-probe\\.")
      set(comp probe)
    elseif(page MATCHES "^(mrcctl|mrc-sim|mrc-decode|mrc-pair|mrc-sim-scenario)\\.")
      set(comp tools)
    else()
      set(comp common)
    endif()
    install(FILES ${out}.gz DESTINATION ${CMAKE_INSTALL_MANDIR}/man${section} COMPONENT ${comp})
  endforeach()
  add_custom_target(man ALL DEPENDS ${MRCFAB_MAN_PAGES})
endif()

# every package's copyright and changelog (Debian's places; harmless elsewhere)
execute_process(COMMAND git -C ${PROJECT_SOURCE_DIR} log -1 --format=%aD
                OUTPUT_VARIABLE MRCFAB_CHANGELOG_DATE OUTPUT_STRIP_TRAILING_WHITESPACE
                ERROR_QUIET)
if(MRCFAB_CHANGELOG_DATE STREQUAL "")
  set(MRCFAB_CHANGELOG_DATE "Tue, 01 Dec 2026 00:00:00 +0000")
endif()
execute_process(COMMAND git -C ${PROJECT_SOURCE_DIR} rev-parse --short=12 HEAD
                OUTPUT_VARIABLE MRCFAB_REVISION OUTPUT_STRIP_TRAILING_WHITESPACE ERROR_QUIET)
set(MRCFAB_PACKAGE_VERSION ${PROJECT_VERSION} CACHE STRING "the packages' version")
configure_file(${PROJECT_SOURCE_DIR}/deploy/debian/changelog.in ${CMAKE_BINARY_DIR}/debian/changelog
               @ONLY)
add_custom_command(OUTPUT ${CMAKE_BINARY_DIR}/debian/changelog.gz
                   COMMAND gzip -9nc ${CMAKE_BINARY_DIR}/debian/changelog
                           > ${CMAKE_BINARY_DIR}/debian/changelog.gz
                   DEPENDS ${CMAKE_BINARY_DIR}/debian/changelog VERBATIM)
add_custom_target(changelog ALL DEPENDS ${CMAKE_BINARY_DIR}/debian/changelog.gz)
foreach(comp common controller agent probe tools)
  install(FILES ${PROJECT_SOURCE_DIR}/deploy/debian/copyright
                ${CMAKE_BINARY_DIR}/debian/changelog.gz
          DESTINATION ${CMAKE_INSTALL_DATADIR}/doc/mrcfab-${comp} COMPONENT ${comp})
endforeach()
