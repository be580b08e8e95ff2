SELECT status, SUM(amount * 2) AS doubled
FROM source('orders')
GROUP BY status
