SELECT status, COUNT(*) AS orders, SUM(amount) AS total
FROM source('orders')
GROUP BY status
