"""Retrieval steps shared by methods: topic resolution, candidate triples, ranking, paths, evidence."""
