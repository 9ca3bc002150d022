# SPDX-License-Identifier: MIT
# The Debian packages (CPack DEB), one per install component: mrcfab-common (the system user,
# /etc/mrcfab, the example topologies), mrcfab-controller, mrcfab-agent, mrcfab-probe and
# mrcfab-tools. Configure with -DCMAKE_INSTALL_PREFIX=/usr, then `cpack -G DEB` in the build
# folder (tests/package/run.sh does).
set(CPACK_GENERATOR DEB)
set(CPACK_PACKAGE_NAME mrcfab)
set(CPACK_PACKAGE_VERSION ${MRCFAB_PACKAGE_VERSION})
set(CPACK_PACKAGE_CONTACT "mrcfab maintainers <mrcfab@example.org>")
set(CPACK_PACKAGE_DESCRIPTION_SUMMARY
    "control plane and path health for multi-plane SRv6 MRC fabrics")
set(CPACK_PACKAGING_INSTALL_PREFIX ${CMAKE_INSTALL_PREFIX})
set(CPACK_STRIP_FILES ON)
set(CPACK_DEB_COMPONENT_INSTALL ON)
set(CPACK_COMPONENTS_ALL common controller agent probe tools)
set(CPACK_DEBIAN_FILE_NAME DEB-DEFAULT)
set(CPACK_DEBIAN_PACKAGE_SHLIBDEPS ON)
set(CPACK_DEBIAN_PACKAGE_SECTION net)
set(CPACK_DEBIAN_PACKAGE_PRIORITY optional)
set(CPACK_DEBIAN_PACKAGE_CONTROL_STRICT_PERMISSION ON)
set(CPACK_DEBIAN_COMPRESSION_TYPE xz)

set(deps "mrcfab-common (= ${MRCFAB_PACKAGE_VERSION})")
set(CPACK_DEBIAN_COMMON_PACKAGE_NAME mrcfab-common)
set(CPACK_DEBIAN_COMMON_PACKAGE_ARCHITECTURE all)
set(CPACK_DEBIAN_COMMON_PACKAGE_DEPENDS "adduser")
set(CPACK_DEBIAN_CONTROLLER_PACKAGE_NAME mrcfab-controller)
set(CPACK_DEBIAN_CONTROLLER_PACKAGE_DEPENDS "${deps}")
set(CPACK_DEBIAN_AGENT_PACKAGE_NAME mrcfab-agent)
set(CPACK_DEBIAN_AGENT_PACKAGE_DEPENDS "${deps}")
set(CPACK_DEBIAN_PROBE_PACKAGE_NAME mrcfab-probe)
set(CPACK_DEBIAN_PROBE_PACKAGE_DEPENDS "${deps}")
set(CPACK_DEBIAN_TOOLS_PACKAGE_NAME mrcfab-tools)
set(CPACK_DEBIAN_TOOLS_PACKAGE_DEPENDS "${deps}")
set(CPACK_DEBIAN_TOOLS_PACKAGE_SUGGESTS "bash-completion")

set(CPACK_COMPONENT_COMMON_DESCRIPTION
    "mrcfab: the shared system user, configuration folder and example topologies
 mrcfab is the control plane and path-health service of a two-tier, multi-plane
 Ethernet fabric for synchronous AI training, built around the Multipath
 Reliable Connection (MRC) transport and SRv6 uSID static source routing.
 This package creates the mrcfab system user and /etc/mrcfab, and ships the
 example topologies.")
set(CPACK_COMPONENT_CONTROLLER_DESCRIPTION
    "mrcfab controller: switch tables, host profiles, denylist and path health
 mrc-controller turns a topology file into every switch's static SRv6 table and
 every host's profile, keeps the denylist and its audit log in SQLite, fuses
 the agents' and the prober's evidence into path health, and serves it all
 over a REST API with a push channel, Prometheus metrics and a dashboard.")
set(CPACK_COMPONENT_AGENT_DESCRIPTION
    "mrcfab agent: the MRC transport on a host's plane ports
 mrc-agent runs the MRC engine over the host's plane ports with SRv6 uSID
 paths, applies the controller's denylist and profile, and reports its
 SACK/NACK/trim statistics. mrc-perf measures bandwidth and latency on it.")
set(CPACK_COMPONENT_PROBE_DESCRIPTION
    "mrcfab prober: probe nodes and the gray-failure localizer
 mrc-probe node sends each host's share of a deterministic probe plan;
 mrc-probe localize names gray failures as a link, switch or optic group and
 keeps the controller's denylist in step; mrc-probe validate sweeps a job's
 paths before it starts.")
set(CPACK_COMPONENT_TOOLS_DESCRIPTION
    "mrcfab tools: mrcctl, mrc-sim, mrc-decode and mrc-pair
 mrcctl validates topologies, renders and installs switch tables, and talks
 to the controller; mrc-sim simulates the fabric with the MRC engine beside
 RoCEv2; mrc-decode decodes MRC packets in a pcap; mrc-pair runs two engines
 over a lossy link.")

# maintainer scripts: the user in mrcfab-common; the daemons only tell systemd of their
# units and stop them on removal, and never start anything
function(mrcfab_scripts comp conf units stop state conffiles)
  set(PKG mrcfab-${comp})
  set(CONF ${conf})
  set(UNITS ${units})
  set(STOP ${stop})
  set(STATE ${state})
  set(dir ${CMAKE_BINARY_DIR}/debian/${comp})
  foreach(s postinst prerm postrm)
    configure_file(${PROJECT_SOURCE_DIR}/deploy/debian/daemon.${s}.in ${dir}/${s} @ONLY)
  endforeach()
  string(REPLACE ";" "\n" lines "${conffiles}")
  file(WRITE ${dir}/conffiles "${lines}\n")
  string(TOUPPER ${comp} C)
  set(CPACK_DEBIAN_${C}_PACKAGE_CONTROL_EXTRA
      "${dir}/postinst;${dir}/prerm;${dir}/postrm;${dir}/conffiles" PARENT_SCOPE)
endfunction()
mrcfab_scripts(controller /etc/mrcfab/controller.conf mrc-controller.service
               mrc-controller.service /var/lib/mrcfab/controller
               "${MRCFAB_CONFDIR}/controller.conf")
mrcfab_scripts(agent /etc/mrcfab/agent.conf mrc-agent.service mrc-agent.service
               /var/lib/mrcfab/agent "${MRCFAB_CONFDIR}/agent.conf")
mrcfab_scripts(probe "/etc/mrcfab/probe-node.conf and localize-NAME.conf"
               "mrc-probe-node.service mrc-localize@NAME.service"
               "mrc-probe-node.service 'mrc-localize@*.service'" "/var/lib/mrcfab/localize-*"
               "${MRCFAB_CONFDIR}/probe-node.conf;${MRCFAB_CONFDIR}/localize.conf")
configure_file(${PROJECT_SOURCE_DIR}/deploy/debian/common.postinst
               ${CMAKE_BINARY_DIR}/debian/common/postinst COPYONLY)
configure_file(${PROJECT_SOURCE_DIR}/deploy/debian/common.postrm
               ${CMAKE_BINARY_DIR}/debian/common/postrm COPYONLY)
set(CPACK_DEBIAN_COMMON_PACKAGE_CONTROL_EXTRA
    "${CMAKE_BINARY_DIR}/debian/common/postinst;${CMAKE_BINARY_DIR}/debian/common/postrm")

include(CPack)
