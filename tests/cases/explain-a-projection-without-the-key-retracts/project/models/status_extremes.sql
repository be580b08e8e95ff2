SELECT status, MIN(amount) AS lowest, MAX(amount) AS highest,
       COUNT(DISTINCT amount) AS amounts, AVG(amount) AS mean
FROM source('orders')
GROUP BY status
