"""partsafe: a formal model and reference checker for the cluster-membership, partition-migration
and rebalance protocols of Hazelcast (3.7, 3.9, 4.1) and Apache Ignite 3.
"""

__version__ = "0.1.0"
