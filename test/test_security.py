"""SROS2: the keystore scripts/create_keystore.py writes, and what a node without an enclave can do.

With a Fast DDS built with DDS Security (a system ROS 2 install), a publisher outside the keystore must not get a
transcript acted on: the reasoner, in its enclave, answers only the operator enclave's transcripts. The Fast DDS
of the PyPI wheels is built without DDS Security: there the node must refuse to start when security is asked
for (never run open), and the injection test is skipped with that reason (README, Security).
"""

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

pytest.importorskip("rclpy")

from wafer_reasoner.demo.processes import reserve_domain_id, ros_env, start_node, stop_process  # noqa: E402

REPO = Path(__file__).resolve().parents[1]
SCRIPT = REPO / "scripts" / "create_keystore.py"
REASONER, OPERATOR = "/wafer_reasoner/reasoner_node", "/wafer_reasoner/operator"
NO_SECURITY_LIBRARIES = "doesn't have the security libraries"
WAIT_S = 30.0
ENCLAVE_FILES = {"cert.pem", "key.pem", "identity_ca.cert.pem", "permissions_ca.cert.pem", "governance.p7s",
                 "permissions.xml", "permissions.p7s"}

needs_openssl = pytest.mark.skipif(shutil.which("openssl") is None, reason="needs the openssl command")


@pytest.fixture(scope="module")
def keystore(tmp_path_factory):
    if shutil.which("openssl") is None:
        pytest.skip("needs the openssl command")
    root = tmp_path_factory.mktemp("keystore")
    subprocess.run([sys.executable, str(SCRIPT), str(root)], check=True, capture_output=True, timeout=60)
    return root


def openssl(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run(["openssl", *args], capture_output=True, text=True, timeout=30)


def secure_env(domain_id: int, keystore: Path) -> dict:
    env = ros_env(domain_id)
    env.update(ROS_SECURITY_KEYSTORE=str(keystore), ROS_SECURITY_ENABLE="true", ROS_SECURITY_STRATEGY="Enforce")
    return env


@needs_openssl
def test_the_keystore_has_the_sros2_layout_and_every_file_checks_out(keystore):
    assert (keystore / "public" / "ca.cert.pem").is_file() and (keystore / "private" / "ca.key.pem").is_file()
    for enclave in (REASONER, OPERATOR):
        folder = keystore / "enclaves" / enclave.strip("/")
        assert {p.name for p in folder.iterdir()} == ENCLAVE_FILES
        chain = openssl("verify", "-CAfile", str(folder / "identity_ca.cert.pem"), str(folder / "cert.pem"))
        assert chain.returncode == 0, chain.stderr
        for signed in ("governance.p7s", "permissions.p7s"):
            check = openssl("smime", "-verify", "-in", str(folder / signed), "-CAfile",
                            str(folder / "permissions_ca.cert.pem"), "-out", os.devnull)
            assert check.returncode == 0, check.stderr
        subject = openssl("x509", "-in", str(folder / "cert.pem"), "-noout", "-subject").stdout
        permissions = (folder / "permissions.xml").read_text()
        assert enclave in subject and f"<subject_name>CN={enclave}</subject_name>" in permissions
        assert oct((folder / "key.pem").stat().st_mode & 0o777) == "0o600"
    permissions = (keystore / "enclaves" / "wafer_reasoner" / "operator" / "permissions.xml").read_text()
    publish = permissions.split("<publish>")[1].split("</publish>")[0]
    assert "rt/speech/transcript" in publish and "rt/goal_pose" not in publish  # the operator speaks, never drives
    governance = (keystore / "enclaves" / "governance.xml").read_text()
    assert "<allow_unauthenticated_participants>false" in governance
    assert "<enable_join_access_control>true" in governance


def _start_secure_reasoner(domain_id: int, keystore: Path, log: Path):
    return start_node("reasoner_node", ["--params-file", str(REPO / "config" / "reasoner.yaml"),
                                        "--enclave", REASONER], secure_env(domain_id, keystore), log_path=log)


def _security_unsupported(keystore: Path, tmp_path: Path) -> str:
    """The reason this build cannot run DDS Security, or "" when a node starts in its enclave."""
    lease = reserve_domain_id()
    process = _start_secure_reasoner(lease.domain_id, keystore, tmp_path / "secure_probe.log")
    try:
        process.wait(timeout=8.0)
    except subprocess.TimeoutExpired:
        return ""
    finally:
        stop_process(process)
        lease.release()
    output = (tmp_path / "secure_probe.log").read_text(errors="replace")
    return output if NO_SECURITY_LIBRARIES in output else ""


@needs_openssl
def test_asked_for_security_a_build_without_it_refuses_to_start_instead_of_running_open(keystore, tmp_path):
    lease = reserve_domain_id()
    log = tmp_path / "reasoner_node.log"
    process = _start_secure_reasoner(lease.domain_id, keystore, log)
    try:
        code = process.wait(timeout=WAIT_S)
    except subprocess.TimeoutExpired:
        pytest.skip("this Fast DDS has DDS Security: the node runs in its enclave (the next test checks it)")
    finally:
        stop_process(process)
        lease.release()
    output = log.read_text(errors="replace")
    assert code == 1 and "cannot start" in output and NO_SECURITY_LIBRARIES in output, output
    assert "Traceback" not in output


@needs_openssl
def test_a_node_without_the_enclave_cannot_inject_a_transcript_the_reasoner_acts_on(keystore, tmp_path):
    unsupported = _security_unsupported(keystore, tmp_path)
    if unsupported:
        pytest.skip("the Fast DDS of the PyPI wheels is built without DDS Security (-DSECURITY=OFF): "
                    + unsupported.strip().splitlines()[-2][:160])
    lease = reserve_domain_id()
    reasoner = _start_secure_reasoner(lease.domain_id, keystore, tmp_path / "reasoner_node.log")
    try:
        attacker_plans = _plans_after_speaking(ros_env(lease.domain_id), "go to the kitchen", listen_s=8.0)
        operator_env = {**secure_env(lease.domain_id, keystore), "ROS_SECURITY_ENCLAVE_OVERRIDE": OPERATOR}
        operator_plans = _plans_after_speaking(operator_env, "stop", listen_s=WAIT_S)
    finally:
        stop_process(reasoner)
        lease.release()
    assert attacker_plans == [], attacker_plans  # nothing heard from outside the keystore
    assert [p["plan"] for p in operator_plans] == ["stop()"]  # the operator enclave is heard


def _plans_after_speaking(env: dict, text: str, *, listen_s: float) -> list:
    """Publish ``text`` from a process with ``env`` for ``listen_s`` and return the plan records it saw."""
    script = f"""
import json, time, rclpy
from std_msgs.msg import String
from wafer_reasoner.ros.qos import PLAN_QOS, SPEECH_QOS
rclpy.init()
node = rclpy.create_node("speaker")
seen = []
node.create_subscription(String, "reasoner/plan", lambda m: seen.append(json.loads(m.data)), PLAN_QOS)
speech = node.create_publisher(String, "speech/transcript", SPEECH_QOS)
end = time.monotonic() + {listen_s!r}
while time.monotonic() < end and not [p for p in seen if p["type"] == "plan"]:
    speech.publish(String(data={text!r}))
    rclpy.spin_once(node, timeout_sec=0.5)
print(json.dumps([p for p in seen if p["type"] == "plan"]))
"""
    result = subprocess.run([sys.executable, "-c", script], env=env, capture_output=True, text=True,
                            timeout=listen_s + 30.0)
    lines = result.stdout.strip().splitlines()
    return json.loads(lines[-1]) if lines else [{"error": result.stderr[-500:]}]
