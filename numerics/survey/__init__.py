"""The survey arXiv 2512.01868 (Rigollet, *The mean-field dynamics of transformers*, ICM 2026): its quantitative
statements, each a claim ``survey.*`` or a link to the claim that covers it (:mod:`numerics.survey.statements`)."""
