SELECT SUM(amount) AS total, COUNT(*) AS orders FROM source('orders')
