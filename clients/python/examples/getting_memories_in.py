from recall_client.testing import local_sidecar

with local_sidecar(identity=("acme", "andy")) as sidecar, sidecar.client(scope="veetbot") as memory:  # or RecallClient(address, …)
    vim = memory.remember("Andy", "Andy's editor is Vim.")      # user-stated, portable, active (the defaults)
    session = memory.open_session(scope="veetbot")               # its snapshot shows Vim
    memory.replace(vim.belief_id, "Andy's editor is Helix.")     # a successor, superseding the old belief
    print(session.recall_for_turn("t-1", "which editor does Andy use?").rendered)
