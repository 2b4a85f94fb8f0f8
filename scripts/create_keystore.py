#!/usr/bin/env python3
"""Create an SROS2 keystore with openssl: a CA, signed governance, and one enclave per wafer_reasoner process.

    python3 scripts/create_keystore.py KEYSTORE [--enclave /wafer_reasoner/reasoner_node ...] [--days 3650]

The sros2 CLI (``ros2 security create_keystore`` / ``create_enclave``) is not on PyPI; this writes the same
layout with the ``openssl`` command, so rmw_security_common finds every file where it looks:

    KEYSTORE/
      public/ca.cert.pem                       the CA certificate (identity and permissions CA are one CA)
      public/identity_ca.cert.pem -> ca.cert.pem, public/permissions_ca.cert.pem -> ca.cert.pem
      private/ca.key.pem                       the CA key: keep it off the robot
      enclaves/governance.xml, governance.p7s  domain rules, S/MIME-signed by the CA
      enclaves/<enclave>/                      per process: cert.pem, key.pem, identity_ca.cert.pem,
                                               permissions_ca.cert.pem, governance.p7s, permissions.xml,
                                               permissions.p7s

Governance: only participants with a certificate from this CA join the domain (join access control, no
unauthenticated participants), and discovery, liveliness, topic metadata and data are encrypted. Permissions:
each enclave may publish and subscribe only the topics its process uses (ENCLAVES below; ``*`` stands for a
namespace), plus what every ROS 2 node needs (rosout, parameter events and services, the graph topic).

Run a node in an enclave with ``ROS_SECURITY_KEYSTORE=KEYSTORE ROS_SECURITY_ENABLE=true
ROS_SECURITY_STRATEGY=Enforce`` and ``--ros-args --enclave /wafer_reasoner/reasoner_node``.
"""

from __future__ import annotations

import argparse
import shutil
import subprocess
import sys
import tempfile
from datetime import date, timedelta
from pathlib import Path

DOMAIN_IDS = "0-232"
COMMON_PUBLISH = ("rt/rosout", "rt/parameter_events", "rr/*", "rq/*", "ros_discovery_info")
COMMON_SUBSCRIBE = ("rt/parameter_events", "rq/*", "rr/*", "ros_discovery_info", "rt/clock")
SPEECH, SCENE, ODOM, STATUS, ESTOP = "speech/transcript", "perception/objects", "odom", "manipulator/status", \
    "emergency_stop"
GOAL, CMD_VEL, TARGET, GRIPPER, SAY, PLAN = "goal_pose", "cmd_vel", "manipulator/target_pose", \
    "gripper/commands", "say", "reasoner/plan"
MARKERS, TRANSITIONS = "reasoner/markers", "reasoner_node/transition_event"  # RViz; the lifecycle's events
# NavigateToPose, GripperCommand: goals, cancels, results are services (rq/, rr/: every node may); these are topics
ACTION_TOPICS = ("navigate_to_pose/_action/feedback", "navigate_to_pose/_action/status",
              "gripper_cmd/_action/feedback", "gripper_cmd/_action/status")  # and the gripper's GripperCommand
SESSION = (SPEECH, SCENE, ODOM, STATUS, ESTOP, GOAL, CMD_VEL, TARGET, GRIPPER, SAY, PLAN)  # what a bag records
# enclave -> (topics it publishes, topics it subscribes); names relative to any namespace
ENCLAVES = {
    "/wafer_reasoner/reasoner_node": ((GOAL, CMD_VEL, TARGET, GRIPPER, SAY, PLAN, MARKERS, TRANSITIONS, "diagnostics"),
                                      (SPEECH, SCENE, ODOM, STATUS, ESTOP, *ACTION_TOPICS)),
    "/wafer_reasoner/emergency_stop_relay": ((CMD_VEL,), (ESTOP,)),
    "/wafer_reasoner/sim_world": ((ODOM, SCENE, STATUS, "clock", *ACTION_TOPICS), (GOAL, CMD_VEL, TARGET, GRIPPER)),
    "/wafer_reasoner/operator": ((SPEECH, ESTOP), (PLAN, SAY, ODOM, SCENE, MARKERS, "diagnostics")),
    "/wafer_reasoner/recorder": ((), SESSION),
}


class KeystoreError(RuntimeError):
    pass


def openssl(*args: str, cwd: Path) -> None:
    result = subprocess.run(["openssl", *args], cwd=cwd, capture_output=True, text=True)
    if result.returncode != 0:
        raise KeystoreError(f"openssl {' '.join(args[:2])} failed: {result.stderr.strip()}")


def new_key(path: Path) -> None:
    openssl("genpkey", "-algorithm", "EC", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-out", str(path),
            cwd=path.parent)
    path.chmod(0o600)


def create_ca(root: Path, days: int) -> tuple:
    (root / "public").mkdir(parents=True, exist_ok=True)
    (root / "private").mkdir(parents=True, exist_ok=True)
    key, cert = root / "private" / "ca.key.pem", root / "public" / "ca.cert.pem"
    new_key(key)
    openssl("req", "-new", "-x509", "-key", str(key), "-out", str(cert), "-days", str(days), "-sha256",
            "-subj", "/CN=wafer_reasoner_ca", "-addext", "basicConstraints=critical,CA:TRUE", cwd=root)
    for name in ("identity_ca", "permissions_ca"):
        for folder, suffix in (("public", "cert"), ("private", "key")):
            link = root / folder / f"{name}.{suffix}.pem"
            if not link.exists():
                link.symlink_to(f"ca.{suffix}.pem")
    return key, cert


def sign(document: Path, key: Path, cert: Path) -> Path:
    """The document S/MIME-signed by the CA, as DDS Security's access control plugin reads it (.p7s)."""
    signed = document.with_suffix(".p7s")
    openssl("smime", "-sign", "-text", "-in", str(document), "-out", str(signed), "-signer", str(cert),
            "-inkey", str(key), cwd=document.parent)
    return signed


def governance_xml() -> str:
    return f"""<?xml version="1.0" encoding="UTF-8"?>
<dds xmlns:xsi="http://www.w3.org/2001/XMLSchema-instance"
     xsi:noNamespaceSchemaLocation="http://www.omg.org/spec/DDS-SECURITY/20170901/omg_shared_ca_governance.xsd">
  <domain_access_rules>
    <domain_rule>
      {_domains()}
      <allow_unauthenticated_participants>false</allow_unauthenticated_participants>
      <enable_join_access_control>true</enable_join_access_control>
      <discovery_protection_kind>ENCRYPT</discovery_protection_kind>
      <liveliness_protection_kind>ENCRYPT</liveliness_protection_kind>
      <rtps_protection_kind>SIGN</rtps_protection_kind>
      <topic_access_rules>
        <topic_rule>
          <topic_expression>*</topic_expression>
          <enable_discovery_protection>true</enable_discovery_protection>
          <enable_liveliness_protection>true</enable_liveliness_protection>
          <enable_read_access_control>true</enable_read_access_control>
          <enable_write_access_control>true</enable_write_access_control>
          <metadata_protection_kind>ENCRYPT</metadata_protection_kind>
          <data_protection_kind>ENCRYPT</data_protection_kind>
        </topic_rule>
      </topic_access_rules>
    </domain_rule>
  </domain_access_rules>
</dds>
"""


def _topics(names) -> str:
    expressions = []
    for name in names:
        if name.startswith(("rt/", "rq/", "rr/")) or name == "ros_discovery_info":
            expressions.append(name)  # already a DDS topic name
        else:
            expressions += [f"rt/{name}", f"rt/*/{name}"]  # a ROS topic at the root, or in any namespace
    return "".join(f"<topic>{expression}</topic>" for expression in expressions)


def _domains() -> str:
    low, high = DOMAIN_IDS.split("-")
    return f"<domains><id_range><min>{low}</min><max>{high}</max></id_range></domains>"


def permissions_xml(enclave: str, subject: str, publish, subscribe, days: int) -> str:
    return f"""<?xml version="1.0" encoding="UTF-8"?>
<dds xmlns:xsi="http://www.w3.org/2001/XMLSchema-instance"
     xsi:noNamespaceSchemaLocation="http://www.omg.org/spec/DDS-SECURITY/20170901/omg_shared_ca_permissions.xsd">
  <permissions>
    <grant name="{enclave}">
      <subject_name>{subject}</subject_name>
      <validity>
        <not_before>{date.today().isoformat()}T00:00:00</not_before>
        <not_after>{(date.today() + timedelta(days=days)).isoformat()}T00:00:00</not_after>
      </validity>
      <allow_rule>
        {_domains()}
        <publish><topics>{_topics((*publish, *COMMON_PUBLISH))}</topics></publish>
        <subscribe><topics>{_topics((*subscribe, *COMMON_SUBSCRIBE))}</topics></subscribe>
      </allow_rule>
      <default>DENY</default>
    </grant>
  </permissions>
</dds>
"""


def create_enclave(root: Path, enclave: str, ca_key: Path, ca_cert: Path, days: int) -> Path:
    if not enclave.startswith("/") or ".." in enclave.split("/"):
        raise KeystoreError(f"an enclave is an absolute path like /wafer_reasoner/reasoner_node, got {enclave!r}")
    folder = root / "enclaves" / enclave.strip("/")
    folder.mkdir(parents=True, exist_ok=True)
    subject = f"CN={enclave}"
    new_key(folder / "key.pem")
    with tempfile.TemporaryDirectory() as scratch:
        request = Path(scratch) / "request.csr"
        escaped = subject.replace("/", "\\/")  # openssl -subj separates name parts with '/'
        openssl("req", "-new", "-key", str(folder / "key.pem"), "-out", str(request), "-subj", f"/{escaped}",
                cwd=folder)
        openssl("x509", "-req", "-in", str(request), "-CA", str(ca_cert), "-CAkey", str(ca_key), "-CAcreateserial",
                "-CAserial", str(Path(scratch) / "ca.srl"), "-out", str(folder / "cert.pem"), "-days", str(days),
                "-sha256", cwd=folder)
    for name in ("identity_ca", "permissions_ca"):
        shutil.copyfile(ca_cert, folder / f"{name}.cert.pem")
    shutil.copyfile(root / "enclaves" / "governance.p7s", folder / "governance.p7s")
    publish, subscribe = ENCLAVES.get(enclave, ((), ()))
    (folder / "permissions.xml").write_text(permissions_xml(enclave, subject, publish, subscribe, days))
    sign(folder / "permissions.xml", ca_key, ca_cert)
    return folder


def create_keystore(root: Path, enclaves, days: int = 3650) -> Path:
    if shutil.which("openssl") is None:
        raise KeystoreError("the openssl command is needed (apt-get install openssl)")
    root = Path(root)
    ca_key, ca_cert = create_ca(root, days)
    (root / "enclaves").mkdir(exist_ok=True)
    (root / "enclaves" / "governance.xml").write_text(governance_xml())
    sign(root / "enclaves" / "governance.xml", ca_key, ca_cert)
    for enclave in enclaves:
        create_enclave(root, enclave, ca_key, ca_cert, days)
    return root


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("keystore", type=Path)
    parser.add_argument("--enclave", action="append", help=f"enclave path (repeatable; default: {list(ENCLAVES)})")
    parser.add_argument("--days", type=int, default=3650)
    args = parser.parse_args(argv)
    try:
        create_keystore(args.keystore, args.enclave or list(ENCLAVES), args.days)
    except KeystoreError as error:
        print(f"create_keystore: {error}", file=sys.stderr)
        return 1
    print(f"keystore in {args.keystore}; enclaves: {', '.join(args.enclave or ENCLAVES)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
