SELECT label, COUNT(*) AS events
FROM ref('labelled')
GROUP BY label
